// Package corpus holds what the word-count samples share: their two streams and
// the sentences they count. It exists so each sample defines only its topology.
package corpus

// Sentence is a line of text, Storm's "sentence" field.
type Sentence struct {
	Text string `storm:"sentence"`
}

// Word is one word of a sentence, Storm's "word" field.
type Word struct {
	Text string `storm:"word"`
}

// Sentences are the lines the sample spouts cycle through.
var Sentences = []string{
	"the cow jumped over the moon",
	"an apple a day keeps the doctor away",
	"four score and seven years ago",
	"snow white and the seven dwarfs",
	"i am at two with nature",
}

// Line returns the sentence for a running counter n.
func Line(n int) string { return Sentences[n%len(Sentences)] }

// Package corpus holds what the word-count samples share: their two streams and
// the sentences they count. It exists so each sample defines only its topology.
package corpus

import (
	"math/rand/v2"
	"slices"
	"strings"
)

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

// Lines returns n lines of 3 to 9 words drawn with seed from the words of
// Sentences: line i is the same for every n > i, so a longer run's input
// starts with a shorter run's (the kill-and-resume samples rely on it).
func Lines(n int, seed uint64) []string {
	var vocab []string
	for _, s := range Sentences {
		vocab = append(vocab, strings.Fields(s)...)
	}
	slices.Sort(vocab)
	vocab = slices.Compact(vocab)
	r := rand.New(rand.NewPCG(seed, seed))
	lines := make([]string, n)
	words := make([]string, 0, 9)
	for i := range lines {
		words = words[:0]
		for range 3 + r.IntN(7) {
			words = append(words, vocab[r.IntN(len(vocab))])
		}
		lines[i] = strings.Join(words, " ")
	}
	return lines
}

// WordCounts counts the words of lines.
func WordCounts(lines []string) map[string]int {
	counts := map[string]int{}
	for _, l := range lines {
		for _, w := range strings.Fields(l) {
			counts[w]++
		}
	}
	return counts
}

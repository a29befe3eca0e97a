package dsl

import (
	"strconv"
	"testing"
)

// BenchmarkStateCount is a word count's per-tuple work on a State: a Get
// and a Put of one of 1,000 keys.
func BenchmarkStateCount(b *testing.B) {
	words := make([]string, 1000)
	for i := range words {
		words[i] = "word" + strconv.Itoa(i)
	}
	st := newState[string, int]()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w := words[i%len(words)]
		n, _ := st.Get(w)
		st.Put(w, n+1)
		if i%100000 == 0 {
			_, _ = st.snapshot(func(k, v []byte) {})
		}
	}
}

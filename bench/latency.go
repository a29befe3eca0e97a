package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// subBits sets the histogram's precision: each power of two is split into
// 1<<subBits buckets, so a bucket is at most 1/32 (about 3%) of its value wide.
const subBits = 5

const (
	subCount   = 1 << subBits
	maxBuckets = (64-subBits)*subCount + 2*subCount
)

// sampleEvery is how often a spout stamps a tuple for latency: one in 8. Reading the
// clock for every tuple would cost more than the runtime being measured.
const sampleEvery = 8

// histogram counts durations in log-linear buckets. record is safe for
// concurrent use (watermill's handlers run on many goroutines); the
// single-goroutine recorders pay one uncontended atomic add per sample.
type histogram struct {
	counts [maxBuckets]atomic.Uint64
}

func bucketOf(v uint64) int {
	exp := bits.Len64(v) - (subBits + 1)
	if exp < 0 {
		exp = 0
	}
	return exp*subCount + int(v>>uint(exp))
}

// bucketValue is the middle of bucket i.
func bucketValue(i int) uint64 {
	if i < 2*subCount {
		return uint64(i)
	}
	exp := i/subCount - 1
	m := uint64(i - exp*subCount)
	return m<<uint(exp) + (1<<uint(exp))/2
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))].Add(1)
}

func (h *histogram) reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
}

func (h *histogram) total() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// quantile returns the duration below which a fraction q of the samples fall,
// or 0 without samples.
func (h *histogram) quantile(q float64) time.Duration {
	total := h.total()
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i := range h.counts {
		if seen += h.counts[i].Load(); seen >= rank {
			return time.Duration(bucketValue(i))
		}
	}
	return time.Duration(bucketValue(maxBuckets - 1))
}

// epoch is the zero of stamp.
var epoch = time.Now()

// stamp returns a monotonic timestamp in nanoseconds, never zero.
func stamp() int64 { return int64(time.Since(epoch)) + 1 }

package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Record is a Kafka record as the spout emits it, and as a sink's route
// function describes what to produce (the sink ignores Partition and Offset,
// and a zero Timestamp means now). It is a stream type: its fields are the
// tuple's fields, named as Storm's KafkaSpout names them.
//
// A tuple is immutable once emitted: nobody may change Key, Value or Headers.
// The spout's Key, Value and header values are the client's fetched buffers,
// shared rather than copied (the client never reuses them), so they may be
// kept after the tuple is acked.
type Record struct {
	Topic     string    `storm:"topic"`
	Partition int32     `storm:"partition"`
	Offset    int64     `storm:"offset"`
	Key       []byte    `storm:"key"`
	Value     []byte    `storm:"value"`
	Headers   []Header  `storm:"headers"`
	Timestamp time.Time `storm:"timestamp"`
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

func fromKgo(r *kgo.Record) Record {
	out := Record{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Key: r.Key, Value: r.Value, Timestamp: r.Timestamp,
	}
	if len(r.Headers) > 0 {
		out.Headers = make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			out.Headers[i] = Header{Key: h.Key, Value: h.Value}
		}
	}
	return out
}

// fill sets out (a zeroed record) to what r describes. Key, Value and the
// headers' values are shared, not copied: a tuple is immutable, and the
// client only reads them.
func (r Record) fill(out *kgo.Record) {
	out.Topic, out.Key, out.Value, out.Timestamp = r.Topic, r.Key, r.Value, r.Timestamp
	if len(r.Headers) > 0 {
		out.Headers = make([]kgo.RecordHeader, len(r.Headers))
		for i, h := range r.Headers {
			out.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
		}
	}
}

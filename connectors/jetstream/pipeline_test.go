package jetstream_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
)

// Out is what the work bolt of the end-to-end pipeline emits to the sink.
type Out struct {
	Seq  uint64
	Data string
}

var errOnPurpose = errors.New("work: failed on purpose")

// pipeline is IN (subjects in.>) -> spout -> work -> sink -> OUT (out.>).
// work fails the deliveries fail picks, reports the others to processed
// (from the work task's goroutine), and emits Out; the sink publishes it
// with the id "in-<stream seq>", so a replay is stored once.
type pipeline struct {
	url       string
	spoutOpts []jetstream.Option
	fail      func(m jetstream.Message) bool
	processed func(m jetstream.Message)
	conf      dsl.Conf
}

func (p pipeline) topology() (*dsl.Topology, error) {
	conf := dsl.Conf{dsl.MaxSpoutPending: 64, dsl.MessageTimeout: 10 * time.Second}
	for k, v := range p.conf {
		conf[k] = v
	}
	b := dsl.New("jetstream-pipeline", conf)
	b.Streams(jetstream.Message{}, Out{})
	spout := b.Spout("in", jetstream.Spout[jetstream.Message](p.url, "IN", "pipeline", nil, p.spoutOpts...))
	work := b.Bolt("work", dsl.AutoAck(func(m jetstream.Message, out dsl.Emitter) error {
		if p.fail != nil && p.fail(m) {
			return errOnPurpose
		}
		if p.processed != nil {
			p.processed(m)
		}
		out.Emit(Out{Seq: m.StreamSeq, Data: string(m.Data)})
		return nil
	}), dsl.Parallelism(2))
	sink := b.Bolt("out", jetstream.Sink[Out](p.url, func(o Out) (jetstream.Record, error) {
		return jetstream.Record{Subject: "out.records", Data: []byte(o.Data), MsgID: fmt.Sprintf("in-%d", o.Seq)}, nil
	}))
	b.Anchored(spout, work, dsl.Shuffle[jetstream.Message]())
	b.Anchored(work, sink, dsl.Shuffle[Out]())
	return b.Build()
}

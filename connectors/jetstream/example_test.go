package jetstream_test

import (
	"fmt"
	"strings"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/dsl"
)

// Upper is the example's stream: a message's text, upper-cased.
type Upper struct {
	Seq  uint64
	Text string
}

// This topology reads the stream ORDERS through the durable consumer
// "uppercase", upper-cases each message and publishes it on
// "upper.<subject>", with the input's stream sequence as the message id.
func Example() {
	const url = "nats://127.0.0.1:4222"
	b := dsl.New("uppercase", dsl.Conf{dsl.MaxSpoutPending: 256})
	b.Streams(Upper{})
	in := b.Spout("orders", jetstream.Spout(url, "ORDERS", "uppercase", func(m jetstream.Message) (Upper, error) {
		return Upper{Seq: m.StreamSeq, Text: strings.ToUpper(string(m.Data))}, nil
	}))
	out := b.Bolt("publish", jetstream.Sink(url, func(u Upper) (jetstream.Record, error) {
		return jetstream.Record{Subject: "upper.orders", Data: []byte(u.Text), MsgID: fmt.Sprint("orders-", u.Seq)}, nil
	}))
	b.Anchored(in, out, dsl.Shuffle[Upper]())
	topo, err := b.Build()
	fmt.Println(topo.Name, err)
	// Then: supervision.Run(ctx, topo)
	// Output: uppercase <nil>
}

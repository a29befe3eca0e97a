package jetstream

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Message is a JetStream message as the spout hands it to the translator.
// Data and Header belong to the message: keep them, do not change them.
type Message struct {
	Subject     string
	Data        []byte
	Header      nats.Header
	Stream      string
	StreamSeq   uint64    // the message's sequence in its stream
	ConsumerSeq uint64    // the delivery's sequence in the consumer
	Delivered   uint64    // deliveries so far, this one included (1 the first time)
	Time        time.Time // when the stream stored it
}

// Record is what the sink publishes for one input.
type Record struct {
	Subject string
	Data    []byte
	Header  nats.Header
	// MsgID is sent as Nats-Msg-Id: the stream drops a second record with
	// the same id inside its duplicate window, so a replayed input is stored
	// once. Empty: derived from the subject and data (see [Sink]).
	MsgID string
}

func toMessage(m jetstream.Msg) (Message, error) {
	meta, err := m.Metadata()
	if err != nil {
		return Message{}, fmt.Errorf("jetstream: reading the metadata of a message on %q: %w", m.Subject(), err)
	}
	return Message{
		Subject: m.Subject(), Data: m.Data(), Header: m.Headers(),
		Stream: meta.Stream, StreamSeq: meta.Sequence.Stream, ConsumerSeq: meta.Sequence.Consumer,
		Delivered: meta.NumDelivered, Time: meta.Timestamp,
	}, nil
}

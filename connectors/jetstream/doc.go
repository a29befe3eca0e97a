// Package jetstream connects goshelter topologies to NATS JetStream: a
// reliable spout reading a stream through a durable pull consumer, and a sink
// bolt publishing records, each carrying goshelter's at-least-once guarantee
// to and from the server.
//
// # Spout
//
// [Spout] emits one tuple per message (a [Message], or the user's type through
// a translator). A message is acked on the server when its tuple tree
// completes, and negatively acknowledged with a delay when the tree fails or
// times out (base·2^(deliveries-1), at most a max; see [WithNackBackoff]), so
// JetStream redelivers it. Every task of the spout shares one durable
// consumer, which the spout creates or updates: explicit acks, unlimited
// deliveries, the AckWait of [WithAckWait], and a MaxAckPending of
// Parallelism x (max spout pending + [WithBuffer]), so the server never hands
// out more than the topology can hold.
//
// A task fetches in the background into a bounded buffer of its own; Next
// only takes from that buffer, so it never waits for the server.
//
// # AckWait and the message timeout
//
// A tree may stay open longer than the consumer's AckWait (the topology's
// message timeout is 30 s by default, as is JetStream's AckWait). The spout
// sends an in-progress signal, every third of the AckWait, for each message
// whose tree is open (or which waits in the buffer) longer than that, so the
// server does not redeliver it while goshelter still tracks it: the AckWait
// may be shorter than the message timeout. It still bounds how soon the
// messages a crashed process held are redelivered. Options out of range (an
// AckWait under 30 ms, for one) fail the task at start with an error naming
// the option.
//
// # Sink
//
// [Sink] publishes a [Record] per input and acks the input only when the
// stream acknowledged it; a publish error or timeout fails the input, so its
// tree is replayed. Each record carries a Nats-Msg-Id, so the stream stores a
// replayed record once within its duplicate window.
//
// # Lifetimes
//
// Each task opens its own connection, which reconnects by itself when the
// server goes away. When the task is deactivated or stops, its goroutines end
// and its connection closes: the spout first hands its buffered messages back
// and waits until the messages it handed out are settled (acked by the drain
// or nacked by the stop), at most a message timeout and an AckWait.
package jetstream

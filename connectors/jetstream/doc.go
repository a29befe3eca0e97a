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
// # Messages that always fail
//
// By default a message whose tree fails is redelivered forever, as
// JetStream's own MaxDeliver of -1 does: the spout drops nothing unless told
// to. [WithMaxDeliver](n) gives a message up after its n-th failure: it is
// logged at error level with its stream and sequence, counted in the task's
// metric "jetstream.gave-up" and passed to the [WithGiveUp] function. Without
// state the spout then terminates it on the server (the server's delivery
// count decides, so redeliveries after an AckWait count too); the shared
// consumer itself keeps unlimited deliveries, so a message is never dropped
// by the server without this report. In a topology with state see below.
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
// # Exactly-once in a topology with state
//
// When the topology has state (dsl.Stateful bolts and a store), both take
// part in its checkpoints ([dsl.TaskInfo].Checkpointed), and a crash
// anywhere neither loses nor repeats a message in the state or the output
// stream:
//
//   - The spout is a positioned source. Every task reads the whole stream
//     (its filter subjects applied) through a durable consumer of its own,
//     named <durable>-t<index>-<suffix>, and hands out the messages whose
//     stream sequence mod the parallelism is its index. Its position, stored
//     with each checkpoint, is the sequence after the last message it
//     handed out or passed over; after a restart or a crash it starts there.
//     The consumers use AckAll and are acked only up to what a committed
//     checkpoint covers, so their ack floor shows the committed lag; they
//     are deleted when the task stops. A failed tree is not nacked: the
//     topology rolls back and replays it. With no checkpoint yet a task reads
//     from the stream's start. Each task reads every message, so the spout
//     reads the stream parallelism times.
//   - Each failed tree rolls the whole topology back, so a message that
//     always fails would do so until the supervisor's restart limit stops
//     the topology; this is what the default (no [WithMaxDeliver] bound)
//     gives, loudly, rather than dropping a message nobody asked to drop.
//     With a bound, the spout counts each message's failures in memory that
//     outlives the rollbacks (not a process restart): after a rewind the
//     message is handed out again only once the [WithNackBackoff] delay of
//     its failures has passed (the task's later messages wait with it), and
//     after n failures it is skipped (the position moves past it, so it is in
//     no state) and reported once, as above; the rest flows. Failures are
//     forgotten once a committed checkpoint is past them. Messages abandoned
//     by a rollback (in flight when another message failed) are not counted.
//   - The sink writes ahead: a task keeps each input's record (acking the
//     input at once), its records are committed with the checkpoint, and it
//     publishes them after the commit with ids derived from the topology,
//     component, task, checkpoint and place (or Record.MsgID when set).
//     After a crash the last committed checkpoint's records are published
//     again with the same ids and stored once. Costs: the output goes
//     through the store and reaches the stream about a checkpoint interval
//     later. Requirements: the stream's Duplicates window must outlast the
//     longest recovery ([WithDuplicateWindow], checked on the first
//     acknowledgement from each stream); what a task keeps is capped
//     ([WithKeptBytes]).
//
// A spout declared with dsl.OutsideCheckpoint(), and any spout or sink in a
// topology without state, keeps the at-least-once behaviour above.
//
// # Lifetimes
//
// Each task opens its own connection, which reconnects by itself when the
// server goes away. When the task is deactivated or stops, its goroutines end
// and its connection closes: the spout first hands its buffered messages back
// and waits until the messages it handed out are settled (acked by the drain
// or nacked by the stop), at most a message timeout and an AckWait.
package jetstream

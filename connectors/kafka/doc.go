// Package kafka connects goshelter topologies to Kafka: a spout that consumes
// topics as a consumer group with Storm's KafkaSpout semantics, or, in a
// topology with state, by offset as part of the checkpoints (exactly once),
// and a sink bolt that acks its input only when the broker stored the record.
//
// It is built on github.com/twmb/franz-go and lives in a module of its own,
// so applications that use only goshelter's core never have a Kafka client
// in their module graph.
//
// # Spout
//
// [Spout] (or [SpoutOf], with a translator to the application's stream type)
// runs one group member per task in a topology without state (see "Exactly
// once" for one with state). Under [AtLeastOnce], the default, each
// partition is committed every commit period only up to its first record not
// yet acked, so a crash repeats records and never skips one; a failed record
// is retried with exponential back-off and, after the maximum of retries,
// committed past and reported (a log at error level, the task metric
// "kafka-gave-up" and the [WithGiveUp] function). [AtMostOnce] and
// [NoGuarantee] emit untracked tuples, as Storm does.
//
//	spout := kafka.Spout([]string{"localhost:9092"}, "orders-app", []string{"orders"},
//		kafka.WithCommitPeriod(time.Second),
//		kafka.WithRetry(0, 10*time.Millisecond, 10*time.Second, 5))
//
// On a rebalance the spout commits how far its revoked partitions are done
// and forgets their records: their acks that arrive later are ignored, and
// the partitions' new owner resumes from that commit. Partitions that are
// lost (the member was expelled) are forgotten without a commit.
//
// # Exactly once
//
// In a topology with state (see docs/STATE.md) a reliable [Spout] runs in the
// positioned mode instead, without being asked: its tasks are then part of
// the checkpoints, so every stateful bolt counts each record exactly once
// after any crash, restart or rollback. It is the default there because the
// group mode cannot give that: a record counted by a committed checkpoint
// and not yet committed to the group (its acks come after the checkpoint) is
// read again after a crash, or by the member a rebalance hands its partition
// to; a silent fall-back to at-least-once would double counts. A spout
// declared with dsl.OutsideCheckpoint() keeps the group mode (at-least-once
// for the states), and so do [AtMostOnce] and [NoGuarantee].
//
// In the positioned mode:
//
//   - goshelter assigns the partitions, not a group rebalance, so no other
//     member can take one mid-checkpoint: the subscribed topics are sorted, and
//     partition j of the topic ranked r goes to task (r+j) mod parallelism (for
//     one topic, partition j to task j mod parallelism). Each task reads its
//     partitions by offset and is no member of the group.
//   - A task's position is the next offset of each of its partitions after
//     the last record it emitted, stored with each checkpoint; a restart (in
//     the process, or a new process on the same store) seeks there. A
//     partition with no position starts by [WithFirstPoll], where the
//     committed offset is the group's, read without joining it.
//   - Partitions created while the topology runs are found every
//     [WithPartitionDiscovery] period (10 s by default) and read from their
//     earliest offset: records may have been produced to them before they
//     were found, and a "latest" start would skip those.
//   - The group's committed offsets follow the committed checkpoints, every
//     commit period (a record is acked only once a committed checkpoint
//     covers it), for lag monitoring only: they are committed as an admin
//     tool does, and refused while the group has members of its own.
//   - A failed record rolls the topology back to its last checkpoint (see
//     docs/STATE.md). Its failures are counted across the rollbacks, in
//     memory the spout definition keeps for the life of the process; after
//     the rewind it is emitted again once its [WithRetry] back-off is over
//     and, after the maximum of retries, skipped (the position moves past it)
//     and reported as in the group mode. The counts do not survive the
//     process: a new process tries such a record again from zero.
//   - The records of the topics' partitions are read as they are; options
//     passed with [WithClientOptions] that assign partitions or join a group
//     break the mode. An offset deleted by retention while no process ran
//     restarts at the first record still there.
//
// # Several processes
//
// Without [WithProcessShare] a positioned spout reads every partition of its
// topics: a second process running the same topology would read them too, and
// its own store would count them again. Processes that split the topics run
// the same definition with the same parallelism P and WithProcessShare(i, n),
// i from 0 to n-1, each on a store of its own: process i's task k is task
// i*P+k of n*P, and reads the partitions that fall to that task as above.
// Changing n or P moves partitions between tasks (whose positions are kept
// by task) and so breaks exactly-once for them: keep both for the life of
// the stores.
//
// # Sink
//
// [Sink] produces one record per input, with the topic and key the route
// function chooses, and acks the input on the broker's acknowledgement
// (acks=all, idempotent producer), or fails it, so the spout of its tree
// retries it. Feed it tracked tuples (from a reliable spout, or from a bolt
// whose own input edge is anchored): its acks are what tell the spout that a
// record went through.
//
//	sink := kafka.Sink(seeds, func(o Order) kafka.Record {
//		return kafka.Record{Topic: "invoices", Key: []byte(o.ID), Value: o.JSON()}
//	})
//
// # Exactly-once
//
// In a topology with state (a stateful bolt; see docs/STATE.md) the sink is
// a two-phase-commit sink, as Flink's KafkaSink with exactly-once delivery:
//
//   - Each task has two transactional producers, with the transactional ids
//     "<prefix><topology>/<component>/<task index>/0" and ".../1" (prefix
//     [DefaultTransactionalIDPrefix], or [WithTransactionalIDPrefix]). The
//     records of the inputs before checkpoint n's barrier go in one
//     transaction; the inputs after the barrier arrive before n commits, so
//     they go in a transaction of the other producer. Each input is acked
//     when the broker acknowledged its record, and the barrier waits for
//     those acks.
//   - At the barrier the transaction is flushed and its transactional id,
//     producer id and epoch are stored in the checkpoint, atomically with
//     the states and source positions. Only after the store committed the
//     checkpoint is the transaction committed. A record that failed makes
//     the checkpoint fail: the topology rolls back and replays.
//   - A new incarnation (a rollback, or a new process on the same store)
//     first commits the transaction the last committed checkpoint stored,
//     with a raw EndTxn (harmless when it was committed already), then
//     initialises both producers, which fences any older producer with the
//     same ids and aborts their open transactions: output after the last
//     checkpoint is replayed, and a read_committed consumer sees every
//     record once.
//
// The transaction timeout ([WithTransactionTimeout], default
// [DefaultTransactionTimeout]) must outlast a transaction's life: from its
// first record (after the previous barrier) to its checkpoint's commit, and
// after a crash until the next process recovered it; that is more than
// twice the checkpoint interval plus the longest restart. A task refuses to
// start with a timeout not above twice the interval. A broker that aborts a
// transaction on timeout after its checkpoint committed loses its records:
// the recovery logs that the transaction had ended.
//
// Consumers of the output must read with read_committed isolation, and see
// the output of a checkpoint once it committed: the checkpoint interval is
// the output's latency. Two processes running one topology on one cluster
// fence each other's producers.
//
// [WithoutTransactions] keeps the sink at-least-once under state: it acks
// each input on the broker's answer and the checkpoint waits for those acks,
// so no output is lost, but what was produced after the last checkpoint is
// produced again after a rollback. Without state the sink is the
// at-least-once sink described above, whatever the options.
//
// A task stopping under state closes its producers without ending their
// transactions: a prepared one may belong to a committed checkpoint, and the
// next incarnation commits it or aborts the rest.
//
// # Closing
//
// Each task closes its client when it stops: a spout once the records it
// emitted are acked or failed (so a clean stop commits what the drain
// acked), a sink after a bounded flush. No goroutine outlives the topology.
package kafka

// Package kafka connects goshelter topologies to Kafka: a spout that consumes
// topics as a consumer group with Storm's KafkaSpout semantics, and a sink
// bolt that acks its input only when the broker stored the record.
//
// It is built on github.com/twmb/franz-go and lives in a module of its own,
// so applications that use only goshelter's core never have a Kafka client
// in their module graph.
//
// # Spout
//
// [Spout] (or [SpoutOf], with a translator to the application's stream type)
// runs one group member per task. Under [AtLeastOnce], the default, each
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
// # Closing
//
// Each task closes its client when it stops: a spout once the records it
// emitted are acked or failed (so a clean stop commits what the drain
// acked), a sink after a bounded flush. No goroutine outlives the topology.
package kafka

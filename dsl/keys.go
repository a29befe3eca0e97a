package dsl

import (
	"fmt"
	"sort"
	"strings"
)

// A conf key starting with one of these prefixes that neither goshelter nor
// Storm defines draws a warning at Build ([Topology.Warnings]) naming the
// closest known key: a typo in "topology.max.spout.pending" must not leave
// the default in force unnoticed. Keys under other prefixes are the
// application's own (Storm passes them through to components) and never warn.
var checkedPrefixes = []string{"topology.", "goshelter."}

// readElsewhere are the keys other goshelter packages read from the raw conf
// (dsl cannot import them): package multilang's served-component switches,
// and the Storm keys its Flux export reads.
var readElsewhere = []string{
	"goshelter.multilang.log.level", "goshelter.multilang.metrics",
	"topology.kryo.register", "topology.workers",
}

// stormOnly are the topology keys Storm defines (its Config and defaults.yaml,
// 0.9 to 2.8) that goshelter accepts without using: they configure what a
// single process has no use for (workers' JVMs, schedulers, serializers,
// Storm's own queues and metrics). They are kept in the conf, passed to shell
// children and exported by multilang.Flux, and they draw no warning.
// "topology.tasks" is not among them: Build checks it (see topologyTasks).
var stormOnly = []string{
	"topology.acker.cpu.pcore.percent", "topology.acker.resources.offheap.memory.mb",
	"topology.acker.resources.onheap.memory.mb", "topology.auto-credentials", "topology.auto.task.hooks",
	"topology.backpressure.check.millis", "topology.backpressure.enable",
	"topology.backpressure.wait.park.microsec", "topology.backpressure.wait.progressive.level1.count",
	"topology.backpressure.wait.progressive.level2.count",
	"topology.backpressure.wait.progressive.level3.sleep.millis", "topology.backpressure.wait.strategy",
	"topology.blobstore.map", "topology.bolt.wait.park.microsec",
	"topology.bolt.wait.progressive.level1.count", "topology.bolt.wait.progressive.level2.count",
	"topology.bolt.wait.progressive.level3.sleep.millis", "topology.bolt.wait.strategy",
	"topology.bolts.late.tuple.stream", "topology.bolts.message.id.field.name",
	"topology.bolts.outgoing.overflow.buffer.enable", "topology.bolts.tuple.timestamp.field.name",
	"topology.bolts.tuple.timestamp.max.lag.ms", "topology.bolts.watermark.event.interval.ms",
	"topology.bolts.window.length.count", "topology.bolts.window.length.duration.ms",
	"topology.bolts.window.sliding.interval.count", "topology.bolts.window.sliding.interval.duration.ms",
	"topology.builtin.metrics.bucket.size.secs", "topology.classpath", "topology.classpath.beginning",
	"topology.component.cpu.pcore.percent", "topology.component.resources.map",
	"topology.component.resources.offheap.memory.mb", "topology.component.resources.onheap.memory.mb",
	"topology.disable.loadaware", "topology.disable.loadaware.messaging", "topology.disruptor.batch.size",
	"topology.disruptor.batch.timeout.millis", "topology.disruptor.wait.strategy",
	"topology.disruptor.wait.timeout.millis", "topology.enable.message.timeouts",
	"topology.enable.send.iconnection.metrics", "topology.enable.v2.metrics.tick", "topology.environment",
	"topology.error.throttle.interval.secs", "topology.event.logger.register",
	"topology.eventlogger.executors", "topology.eventlogger.max.retained.files",
	"topology.eventlogger.rotation.size.mb", "topology.executor.overflow.limit",
	"topology.executor.send.buffer.size", "topology.fall.back.on.java.serialization", "topology.groups",
	"topology.isolate.machines", "topology.kryo.decorators", "topology.kryo.factory",
	"topology.localityaware.higher.bound", "topology.localityaware.lower.bound", "topology.logging.config",
	"topology.logging.sensitivity", "topology.max.error.report.per.interval",
	"topology.max.replication.wait.time.sec", "topology.max.task.parallelism",
	"topology.metrics.consumer.cpu.pcore.percent", "topology.metrics.consumer.register",
	"topology.metrics.consumer.resources.offheap.memory.mb",
	"topology.metrics.consumer.resources.onheap.memory.mb", "topology.metrics.reporters",
	"topology.min.replication.count", "topology.multilang.log.handler", "topology.multilang.serializer",
	"topology.name", "topology.oci.image", "topology.priority", "topology.producer.batch.size",
	"topology.ras.acker.executors.per.worker", "topology.ras.constraint.max.state.search",
	"topology.ras.constraint.max.time.secs", "topology.ras.constraints",
	"topology.ras.one.component.per.worker", "topology.ras.one.executor.per.worker",
	"topology.ras.order.executors.by.proximity.needs", "topology.readonly.groups", "topology.readonly.users",
	"topology.receiver.buffer.size", "topology.scheduler.favored.nodes", "topology.scheduler.strategy",
	"topology.scheduler.unfavored.nodes", "topology.serialized.message.size.metrics",
	"topology.skip.missing.kryo.registrations", "topology.spout.recvq.skips",
	"topology.spout.wait.park.microsec", "topology.spout.wait.progressive.level1.count",
	"topology.spout.wait.progressive.level2.count", "topology.spout.wait.progressive.level3.sleep.millis",
	"topology.spout.wait.strategy", "topology.spread.components",
	"topology.state.kryo.register", "topology.state.provider", "topology.state.provider.config",
	"topology.state.synchronization.timeout.secs", "topology.stats.sample.rate",
	"topology.submitter.principal", "topology.submitter.user",
	"topology.testing.always.try.serialize", "topology.transactional.id", "topology.transfer.batch.size",
	"topology.transfer.buffer.size", "topology.trident.batch.emit.interval.millis",
	"topology.trident.windowing.cache.tuple.limit", "topology.tuple.serializer", "topology.users",
	"topology.v2.metrics.tick.interval.seconds", "topology.version", "topology.worker.childopts",
	"topology.worker.gc.childopts", "topology.worker.logwriter.childopts", "topology.worker.max.heap.size.mb",
	"topology.worker.metrics", "topology.worker.nimbus.thrift.client.use.tls",
	"topology.worker.receiver.thread.count", "topology.worker.shared.thread.pool.size",
	"topology.worker.timeout.secs",
}

// knownKeys is every key that draws no warning, sorted: the keys dsl reads,
// readElsewhere and stormOnly.
var knownKeys = func() []string {
	keys := []string{Debug}
	for k := range confFields {
		keys = append(keys, k)
	}
	keys = append(append(keys, readElsewhere...), stormOnly...)
	sort.Strings(keys)
	return keys
}()

// unknownKeys returns a warning for each key of c under a checked prefix that
// no one knows, in key order, each naming the closest known key.
func unknownKeys(c Conf) []string {
	var warnings []string
	for _, key := range sortedKeys(c) {
		if !checked(key) {
			continue
		}
		if i := sort.SearchStrings(knownKeys, key); i < len(knownKeys) && knownKeys[i] == key {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("conf %q is not a key goshelter or Storm knows; the closest known key is %q", key, closestKey(key)))
	}
	return warnings
}

func checked(key string) bool {
	for _, p := range checkedPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func sortedKeys(c Conf) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// closestKey returns the known key fewest single-byte edits away from key
// (Levenshtein distance), the first in byte order among equals.
func closestKey(key string) string {
	best, bestDist := "", -1
	for _, k := range knownKeys {
		if d := editDistance(key, k); bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (conf
// keys are ASCII), computed a row at a time.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

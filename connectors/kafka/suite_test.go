package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/supervision"
)

func TestKafka(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		return // the SIGKILL spec's child: TestHelperProcess does its work
	}
	RegisterFailHandler(Fail)
	// The mutation run stops at the first failing spec (testsupport.FailFast).
	suite, reporter := GinkgoConfiguration()
	suite.FailFast = suite.FailFast || testsupport.FailFast()
	RunSpecs(t, "kafka connector", suite, reporter)
}

// scaled stretches the safety bounds of waits on slow machines by
// GOSHELTER_TEST_TIMEOUT_SCALE, the one variable of every goshelter suite.
func scaled(d time.Duration) time.Duration { return testsupport.Scaled(d) }

var baseline goleak.Option

var _ = BeforeSuite(func() { baseline = goleak.IgnoreCurrent() })

var _ = BeforeEach(func() {
	// Registered first, so it runs last: after every cluster, client and
	// topology of the spec was closed. A client closes within a bounded
	// time (its final telemetry push waits a second at most), hence the wait.
	DeferCleanup(func() {
		Eventually(func() error { return goleak.Find(baseline) }, scaled(10*time.Second), 100*time.Millisecond).Should(Succeed())
	})
})

// bounded returns a context that ends when the spec does or after a scaled
// 20 s, so that a call a broken build keeps waiting fails the spec instead
// of hanging it.
func bounded() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
	DeferCleanup(cancel)
	return ctx
}

// broker is a kfake cluster of one broker and a client to produce and inspect.
type broker struct {
	c     *kfake.Cluster
	seeds []string
	cl    *kgo.Client
	adm   *kadm.Client
}

func newBroker(opts ...kfake.Opt) *broker {
	opts = append([]kfake.Opt{kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100 * time.Millisecond)}, opts...)
	c, err := kfake.NewCluster(opts...)
	Expect(err).NotTo(HaveOccurred())
	b := &broker{c: c, seeds: c.ListenAddrs()}
	b.cl, err = kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	Expect(err).NotTo(HaveOccurred())
	b.adm = kadm.NewClient(b.cl)
	DeferCleanup(b.close)
	return b
}

func (b *broker) close() {
	b.cl.Close()
	b.c.Close()
}

// produce writes n records to each partition of topic, values "p/i".
func (b *broker) produce(topic string, partitions int32, n int) {
	var rs []*kgo.Record
	for p := range partitions {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d/%d", p, i)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scaled(20*time.Second))
	defer cancel()
	Expect(b.cl.ProduceSync(ctx, rs...).FirstErr()).To(Succeed())
}

// committed returns the group's committed offset of topic[p] (-1: none).
func (b *broker) committed(group, topic string, p int32) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), scaled(10*time.Second))
	defer cancel()
	os, err := b.adm.FetchOffsets(ctx, group)
	if err != nil {
		return -2
	}
	o, ok := os.Lookup(topic, p)
	if !ok {
		return -1
	}
	return o.At
}

// fast are client options that make group membership quick to settle in
// tests: short sessions and heartbeats.
func fast() kafka.Option {
	return kafka.WithClientOptions(kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(50*time.Millisecond),
		kgo.RebalanceTimeout(2*time.Second), kgo.FetchMaxWait(100*time.Millisecond))
}

// ledger counts how often each record was processed.
type ledger struct {
	mu   sync.Mutex // mu guards seen
	seen map[string]int
}

func newLedger() *ledger { return &ledger{seen: map[string]int{}} }

func (l *ledger) add(r kafka.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)]++
}

func (l *ledger) has(topic string, p int32, offset int64) bool { return l.times(topic, p, offset) > 0 }

// times returns how often the record was processed.
func (l *ledger) times(topic string, p int32, offset int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[fmt.Sprintf("%s/%d/%d", topic, p, offset)]
}

// distinct and total are the records processed, without and with repeats.
func (l *ledger) counts() (distinct, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.seen {
		distinct++
		total += n
	}
	return distinct, total
}

func (l *ledger) distinct() int { d, _ := l.counts(); return d }

// run starts topo and stops it at the end of the spec.
func run(topo *dsl.Topology, err error) *supervision.Running {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	r, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()), supervision.WithDrainTimeout(scaled(2*time.Second)))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop, r)
	return r
}

// stop stops r unless the spec stopped it already, so that a spec may stop
// a topology itself and still leave it to DeferCleanup should it fail first.
func stop(r *supervision.Running) {
	ctx, cancel := context.WithTimeout(context.Background(), scaled(30*time.Second))
	defer cancel()
	if err := r.Stop(ctx); !errors.Is(err, supervision.ErrStopped) {
		Expect(err).To(Succeed())
	}
}

// conf is the topologies' conf: a short spout wait, so an idle spout polls
// its client often.
func conf() dsl.Conf {
	return dsl.Conf{dsl.SpoutWait: 2 * time.Millisecond, dsl.MaxSpoutPending: 1000, dsl.MessageTimeout: 30 * time.Second}
}

// freePort returns a port nothing listens on now.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

package kafka_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/connectors/kafka"
	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/supervision"
)

// helperEnv selects the child's role in the SIGKILL spec; seedsEnv passes it
// the parent's broker.
const (
	helperEnv = "KAFKA_SPEC_HELPER"
	seedsEnv  = "KAFKA_SPEC_SEEDS"
)

// TestHelperProcess is the SIGKILL spec's child: it runs in -> spout -> sink
// -> out against the parent's broker, a record every half millisecond or so,
// until it is killed (or a minute passed).
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "child" {
		t.Skip("run by the SIGKILL spec only")
	}
	seeds := strings.Split(os.Getenv(seedsEnv), ",")
	b := dsl.New("sigkill", conf())
	s := b.Spout("in", kafka.Spout(seeds, "sigkill", []string{"in"},
		kafka.WithCommitPeriod(20*time.Millisecond), kafka.WithClientOptions(kgo.SessionTimeout(time.Second),
			kgo.HeartbeatInterval(50*time.Millisecond), kgo.FetchMaxWait(100*time.Millisecond))))
	k := b.Bolt("out", kafka.Sink(seeds, func(r kafka.Record) kafka.Record {
		// Paced, so that the parent kills the child mid-run rather than
		// after it read the whole topic in its first few milliseconds.
		time.Sleep(500 * time.Microsecond)
		return kafka.Record{Topic: "out", Value: fmt.Appendf(nil, "%d/%d", r.Partition, r.Offset)}
	}))
	b.Anchored(s, k, dsl.Shuffle[kafka.Record]())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r, err := supervision.Run(context.Background(), topo, supervision.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute) // the parent kills it long before
	_ = r.Stop(context.Background())
}

var _ = Describe("Kafka spout and sink killed with SIGKILL", Label("connectors", "kafka"), func() {
	It("resumes in a successor from the committed offsets: 0 lost, duplicates counted", func() {
		const parts, per = 4, 500
		b := newBroker(kfake.SeedTopics(parts, "in", "out"))
		b.produce("in", parts, per)
		out := newLedger()
		reader, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.ConsumeTopics("out"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
		Expect(err).NotTo(HaveOccurred())
		defer reader.Close()
		read := func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			reader.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				var p int32
				var o int64
				_, _ = fmt.Sscanf(string(r.Value), "%d/%d", &p, &o)
				out.add(kafka.Record{Topic: "in", Partition: p, Offset: o})
			})
		}
		child := func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			cmd.Env = append(os.Environ(), helperEnv+"=child", seedsEnv+"="+strings.Join(b.seeds, ","))
			cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
			Expect(cmd.Start()).To(Succeed())
			DeferCleanup(func() { // a spec that fails first leaves no child behind
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			})
			return cmd
		}
		kill := func(cmd *exec.Cmd) {
			Expect(cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
			_ = cmd.Wait()
		}

		first := child()
		Eventually(func() int { read(); return out.distinct() }, scaled(60*time.Second)).Should(BeNumerically(">=", parts*per/3))
		// The successor must have a commit to resume from: a child that
		// read a third in its first commit period has none yet.
		committed := func() (sum int64, at [parts]int64) {
			for p := range int32(parts) {
				at[p] = max(b.committed("sigkill", "in", p), 0)
				sum += at[p]
			}
			return sum, at
		}
		Eventually(func() int64 { sum, _ := committed(); return sum }, scaled(20*time.Second), 5*time.Millisecond).Should(BeNumerically(">", 0))
		kill(first)
		killedAt := out.distinct()
		resumeAt, at := committed() // final: the first child is gone
		Expect(resumeAt).To(BeNumerically("<", parts*per), "the first child finished before the kill: the successor resumes nothing")
		successor := child()
		Eventually(func() int { read(); return out.distinct() }, scaled(90*time.Second)).Should(Equal(parts * per))
		kill(successor)
		read()
		distinct, total := out.counts()
		GinkgoWriter.Printf("SIGKILL: produced=%d processed=%d distinct=%d duplicates=%d lost=%d (killed after %d, resumed at %d)\n",
			parts*per, total, distinct, total-distinct, parts*per-distinct, killedAt, resumeAt)
		fmt.Fprintf(os.Stderr, "SIGKILL: produced=%d processed=%d distinct=%d duplicates=%d lost=%d (killed after %d, resumed at %d)\n",
			parts*per, total, distinct, total-distinct, parts*per-distinct, killedAt, resumeAt)
		Expect(parts*per - distinct).To(BeZero())
		// Resumed from the commits: what they covered went out once.
		for p := range int32(parts) {
			for o := range at[p] {
				Expect(out.times("in", p, o)).To(Equal(1), "in[%d] at %d, below the commit at %d", p, o, at[p])
			}
		}
	})
})

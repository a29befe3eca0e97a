package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshelter/goshelter/samples/internal/corpus"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/state/pebble"
)

// The crash child's environment: the parent's broker and the child's
// directory.
const (
	childBrokerEnv = "EXACTLYONCE_CRASH_BROKER"
	childDirEnv    = "EXACTLYONCE_CRASH_DIR"
)

// crashLines is the crash test's input: enough that a child paced at
// crashLineDelay a line is still counting at each of the 20 kills.
const (
	crashLines     = 20000
	crashLineDelay = 300 * time.Microsecond
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(childBrokerEnv); addr != "" {
		os.Exit(crashChild(addr, os.Getenv(childDirEnv)))
	}
	os.Exit(m.Run())
}

// crashChild is the test binary as the crash test's child: the sample's run
// on the parent's broker, with the markers statecrash.Drive waits for.
func crashChild(addr, dir string) int {
	err := Run(context.Background(), Config{Brokers: []string{addr}, Dir: dir, Lines: crashLines, Seed: 1,
		Duration: 2 * time.Minute, Interval: 20 * time.Millisecond, LineDelay: crashLineDelay,
		Running: func() { fmt.Println(statecrash.Running) }})
	if err != nil && !errors.Is(err, ErrNotExact) { // the parent checks the output itself, with figures
		fmt.Fprintln(os.Stderr, "exactlyonce crash child:", err)
		return 1
	}
	fmt.Println(statecrash.Done)
	return 0
}

// crashBroker is the parent's kfake on a fixed loopback port, which the
// children connect to and which outlives them.
func crashBroker(t *testing.T) (*kfake.Cluster, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, "127.0.0.1:" + strconv.Itoa(port)
}

// proveExactlyOnce kills the sample's run 20 times at random moments, lets
// the last run finish, and checks the store and the output: every word
// counted once, every "w=n" record in the output once (read_committed).
func proveExactlyOnce(t *testing.T, during func(t *testing.T, c *kfake.Cluster, addr string) (stop func() string)) {
	c, addr := crashBroker(t)
	dir := t.TempDir()
	note := func() string { return "" }
	if during != nil {
		note = during(t, c, addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(5*time.Minute))
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	figures, err := statecrash.Drive(ctx, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childBrokerEnv+"="+addr, childDirEnv+"="+dir)
		cmd.Stderr = os.Stderr
		return cmd
	}, 20, 120*time.Millisecond, seed)
	extra := note()
	if err != nil {
		t.Fatalf("%v (%v, seed %d) %s", err, figures, seed, extra)
	}
	store, err := pebble.Open(filepath.Join(dir, "store")) // the last child has exited: the directory is free
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := corpus.Lines(crashLines, 1)
	want := corpus.WordCounts(lines)
	s, err := summarise(ctx, []string{addr}, store, lines, want)
	if err != nil {
		t.Fatal(err)
	}
	_, counts, err := stored(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	figures.Messages = crashLines
	figures.Compare(want, counts)
	t.Logf("SIGKILL figures (Kafka -> split -> stateful count -> Kafka, Pebble): kills=%d starts=%d records in=%d words=%d "+
		"records out=%d lost=%d duplicated=%d; stored counts: lost=%d double-counted=%d %s(seed %d)",
		figures.Kills, figures.Starts, crashLines, s.Words, s.Output, s.Lost, s.Duplicated, figures.Lost, figures.Doubled, extra, seed)
	if figures.Kills != 20 {
		t.Errorf("the child finished before it was killed 20 times (seed %d)", seed)
	}
	if s.Counted != s.Words || s.Output != s.Words || s.Lost != 0 || s.Duplicated != 0 || figures.Lost != 0 || figures.Doubled != 0 {
		t.Errorf("want every word counted once and its record out once: %v (seed %d)", s, seed)
	}
}

// TestExactlyOnceSurvivesSIGKILL is issue 31's proof by crashing for Kafka.
func TestExactlyOnceSurvivesSIGKILL(t *testing.T) {
	proveExactlyOnce(t, nil)
}

// The same with a second consumer joining the spout's group for a while: a
// positioned spout assigns its partitions itself, so the newcomer takes
// none of them from it.
func TestExactlyOnceSurvivesSIGKILLWithASecondConsumer(t *testing.T) {
	proveExactlyOnce(t, func(t *testing.T, _ *kfake.Cluster, addr string) func() string {
		// The input is there before the first child, for the newcomer to read.
		ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(time.Minute))
		defer cancel()
		if err := writeInput(ctx, []string{addr}, corpus.Lines(crashLines, 1)); err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(linesTopic),
			kgo.DisableAutoCommit(),
			kgo.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		var polled atomic.Int64
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second) // in the group for 10 s
		var wg sync.WaitGroup
		wg.Go(func() {
			defer cl.Close() // leaves the group
			for ctx.Err() == nil {
				polled.Add(int64(cl.PollFetches(ctx).NumRecords()))
			}
		})
		return func() string {
			cancel()
			wg.Wait()
			if polled.Load() == 0 {
				t.Error("the second consumer read nothing: the test tests nothing")
			}
			return fmt.Sprintf("second consumer read %d records; ", polled.Load())
		}
	})
}

// The same with the broker refusing (and delaying) produce requests for a
// while: each refusal fails records of the sink and rolls the topology back.
func TestExactlyOnceSurvivesSIGKILLWithRefusedProduces(t *testing.T) {
	proveExactlyOnce(t, func(t *testing.T, c *kfake.Cluster, _ string) func() string {
		var seen, refused atomic.Int32
		var over atomic.Bool
		c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			// Let the input through (the first requests), then refuse one
			// produce in four, 40 times.
			if n := seen.Add(1); n <= 40 || n%4 != 0 || refused.Load() >= 40 || over.Load() {
				return nil, nil, false
			}
			refused.Add(1)
			c.SleepControl(func() { time.Sleep(20 * time.Millisecond) }) // a slow broker
			req := r.(*kmsg.ProduceRequest)
			resp := req.ResponseKind().(*kmsg.ProduceResponse)
			for _, t := range req.Topics {
				rt := kmsg.NewProduceResponseTopic()
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewProduceResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p.Partition, kerr.InvalidRecord.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil, true
		})
		return func() string {
			over.Store(true)
			if refused.Load() == 0 {
				t.Error("the broker refused no produce: the test tests nothing")
			}
			return fmt.Sprintf("refused produces=%d of %d; ", refused.Load(), seen.Load())
		}
	})
}

package jetstream_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/connectors/jetstream"
	"github.com/goshelter/goshelter/supervision"
)

// The SIGKILL test runs the pipeline in a child process: the test binary
// itself, with -test.run=^TestHelperProcess$ and these variables.
const (
	roleEnv = "JETSTREAM_SPECS_ROLE" // "pipeline" in the child
	urlEnv  = "JETSTREAM_SPECS_URL"  // the parent's embedded server
	logEnv  = "JETSTREAM_SPECS_LOG"  // the child appends each processed stream sequence here
)

// TestHelperProcess is the child: it runs the pipeline against the parent's
// server until it is killed (or a minute passed), writing a line per
// processed message with a single write, which a SIGKILL cannot tear.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(roleEnv) != "pipeline" {
		t.Skip("run by the SIGKILL spec only")
	}
	f, err := os.OpenFile(os.Getenv(logEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	p := pipeline{url: os.Getenv(urlEnv),
		spoutOpts: []jetstream.Option{jetstream.WithAckWait(time.Second), jetstream.WithNackBackoff(time.Millisecond, 50*time.Millisecond)},
		processed: func(m jetstream.Message) {
			// A millisecond a message slows the child down enough for the
			// parent's kill to land mid-run.
			time.Sleep(time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(f, "%d\n", m.StreamSeq)
		}}
	topo, err := p.topology()
	if err != nil {
		t.Fatal(err)
	}
	r, err := supervision.Run(context.Background(), topo)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
		t.Fatal(r.Wait())
	case <-time.After(time.Minute):
	}
}

// child starts the pipeline in a child process.
func child(url, log string) *exec.Cmd {
	GinkgoHelper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), roleEnv+"=pipeline", urlEnv+"="+url, logEnv+"="+log)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	return cmd
}

func kill(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// lines reads the processed log: every line and the distinct ones.
func lines(path string) (all int, distinct map[string]bool) {
	distinct = map[string]bool{}
	f, err := os.Open(path)
	if err != nil {
		return 0, distinct
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			all++
			distinct[l] = true
		}
	}
	return all, distinct
}

var _ = Describe("A process killed with SIGKILL", Label("connectors", "jetstream"), func() {
	It("is succeeded by one that resumes from the acked position: 0 lost, duplicates counted", func() {
		const n = 3000
		b := newBroker()
		c := connect(b.URL)
		c.stream("IN", "in.>")
		c.stream("OUT", "out.>")
		c.publish("in.records", n)
		log := GinkgoT().TempDir() + "/processed"

		first := child(b.URL, log)
		DeferCleanup(kill, first)
		Eventually(func() int { all, _ := lines(log); return all }).Should(BeNumerically(">=", n/5))
		kill(first)
		killedAt, _ := lines(log)
		storedAtKill, err := c.count("OUT")
		Expect(err).NotTo(HaveOccurred())
		Expect(killedAt).To(BeNumerically("<", n), "killed mid-run")

		second := child(b.URL, log)
		DeferCleanup(kill, second)
		Eventually(c.count).WithArguments("OUT").Should(BeNumerically("==", n))
		Eventually(func() int { return c.consumerInfo("IN", "pipeline").NumAckPending }).Should(BeZero())
		kill(second)

		all, seen := lines(log)
		out := c.readAll("OUT")
		lost := 0
		for i := 1; i <= n; i++ {
			if !seen[fmt.Sprint(i)] {
				lost++
			}
		}
		fmt.Fprintf(GinkgoWriter, "SIGKILL: produced=%d processed=%d (at kill %d, stored %d) distinct=%d duplicates=%d stored=%d stored-distinct=%d lost=%d\n",
			n, all, killedAt, storedAtKill, len(seen), all-len(seen), len(out), distinct(out), lost)
		AddReportEntry("sigkill", fmt.Sprintf("produced=%d processed=%d duplicates=%d stored=%d lost=%d", n, all, all-len(seen), len(out), lost))
		Expect(lost).To(BeZero())
		Expect(len(seen)).To(Equal(n))
		Expect(distinct(out)).To(Equal(n))
		Expect(len(out)).To(Equal(n), "the sink's message ids dropped every replayed record")
	})
})

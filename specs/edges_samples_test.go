package specs_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The samples are programs people run first: they must end when they say and
// tell how they are meant to be started.
var _ = Describe("The samples", Label("edges", "samples"), Ordered, func() {
	var bin string // directory of the built samples
	BeforeAll(func() {
		bin = GinkgoT().TempDir()
		for _, sample := range allSamples {
			build := exec.Command("go", "build", "-o", filepath.Join(bin, sample), "../samples/"+sample)
			build.Stderr = GinkgoWriter
			Expect(build.Run()).To(Succeed(), "building samples/%s", sample)
		}
	})

	// sample runs a built sample with args and empty stdin; it is killed at
	// the safety bound.
	sample := func(bound time.Duration, name string, args ...string) (stdout, stderr string, exit int) {
		GinkgoHelper()
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		cmd.WaitDelay = time.Second // its shell children may hold the pipes a moment longer
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		Expect(ctx.Err()).NotTo(HaveOccurred(), "%s %s was still running after %s; its output ends:\n%s\n%s",
			name, strings.Join(args, " "), bound, sampleTail(out.String()), sampleTail(errOut.String()))
		if exitErr, ok := err.(*exec.ExitError); ok {
			return out.String(), errOut.String(), exitErr.ExitCode()
		}
		Expect(err).NotTo(HaveOccurred())
		return out.String(), errOut.String(), 0
	}

	It("ends the multilang sample within its duration and drain, with its summary, when a shell bolt leaves inputs unacked", func() {
		if _, err := exec.LookPath("python3"); err != nil {
			Skip("python3 is not installed")
		}
		// lossy_split.py never acks one input in four, so the drain cannot
		// empty the topology. The sample promises to end within -duration
		// plus -drain (3 s by default) plus 5 s; it used to give Stop a 30 s
		// deadline equal to the drain, get "context deadline exceeded" and
		// exit 1 after some 40 s with no summary. 20 s is a safety bound.
		stdout, stderr, exit := sample(Scaled(20*time.Second), "multilang",
			"-duration", "2s", "-bolt-cmd", "python3 lossy_split.py", "-dir", "../samples/multilang/testdata")
		Expect(exit).To(Equal(0), "stderr ends:\n%s", sampleTail(stderr))
		summary := sampleLastLine(stdout)
		m := regexp.MustCompile(`^summary: emitted=(\d+) acked=(\d+) failed=(\d+) pending=(\d+) words=\d+ `).FindStringSubmatch(summary)
		Expect(m).NotTo(BeNil(), "the last line is not the summary: %q", summary)
		emitted, acked, failed, pending := sampleAtoi(m[1]), sampleAtoi(m[2]), sampleAtoi(m[3]), sampleAtoi(m[4])
		Expect(acked).To(BeNumerically(">", 0), summary)
		Expect(pending).To(BeNumerically(">", 0), "the lost inputs' sentences are reported as pending: %s", summary)
		Expect(acked+failed+pending).To(Equal(emitted), "every sentence handed out is accounted for: %s", summary)
	})

	It("prints the multilang summary, then exits 1, when a shell bolt crashes under WithoutRestarts", func() {
		if _, err := exec.LookPath("python3"); err != nil {
			Skip("python3 is not installed")
		}
		// crashing_split.py exits 3 after 200 inputs. The sample runs without
		// restarts, so the topology fails; running.Done() used to return the
		// failure before the summary, and the sample exited 1 silently.
		stdout, stderr, exit := sample(Scaled(20*time.Second), "multilang",
			"-duration", "10s", "-bolt-cmd", "python3 crashing_split.py", "-dir", "../samples/multilang/testdata")
		Expect(exit).To(Equal(1), "a failed topology exits non-zero; stderr ends:\n%s", sampleTail(stderr))
		summary := sampleLastLine(stdout)
		Expect(summary).To(MatchRegexp(`^summary: emitted=\d+ acked=\d+ failed=\d+ pending=\d+ words=\d+ `), "stdout ends:\n%s", sampleTail(stdout))
		Expect(sampleLastLine(stderr)).To(ContainSubstring("crashing on purpose"), "the failure comes after the summary, naming its cause")
	})

	It("prints the guaranteed summary, then exits 1, when supervision gives up", func() {
		// -max-restarts 0: the spout's first crash fails the topology.
		stdout, stderr, exit := sample(Scaled(20*time.Second), "guaranteed",
			"-duration", "10s", "-crash-every", "100", "-max-restarts", "0")
		Expect(exit).To(Equal(1), "stderr ends:\n%s", sampleTail(stderr))
		summary := sampleLastLine(stdout)
		m := regexp.MustCompile(`^summary: emitted=(\d+) acked=\d+ failed=\d+ replayed=\d+ pending=\d+ lost=(\d+) restarts=0 `).FindStringSubmatch(summary)
		Expect(m).NotTo(BeNil(), "the last line is not the summary: %q", summary)
		Expect(m[1]).To(Equal("100"), "the spout crashed at its 100th item: %s", summary)
		Expect(m[2]).To(Equal("0"), "the failure lost nothing: %s", summary)
		Expect(sampleLastLine(stderr)).To(ContainSubstring("crashing after 100 tuples"))
	})

	It("ends the word count with the words it split all counted", func() {
		stdout, stderr, exit := sample(Scaled(20*time.Second), "wordcount", "-duration", "1s")
		Expect(exit).To(Equal(0), "stderr ends:\n%s", sampleTail(stderr))
		summary := sampleLastLine(stdout)
		// The figures used to be a snapshot taken before the stop, while
		// words were still queued for the count bolt: counted < words.
		m := regexp.MustCompile(`^summary: emitted=[1-9]\d* words=(\d+) counted=(\d+) `).FindStringSubmatch(summary)
		Expect(m).NotTo(BeNil(), "the last line is not the summary: %q", summary)
		Expect(m[2]).To(Equal(m[1]), "the drain lets every word be counted: %s", summary)
	})

	for _, name := range []string{"multilang", "wordcount"} {
		It("tells in -h and in serve -h that "+name+" serves Storm with \"serve\"", func() {
			for _, args := range [][]string{{"-h"}, {"serve", "-h"}, {"serve", "--help"}} {
				_, stderr, exit := sample(Scaled(10*time.Second), name, args...)
				Expect(exit).To(Equal(0), "%s %s: %s", name, strings.Join(args, " "), stderr)
				Expect(stderr).To(ContainSubstring(name+" [flags] serve"), "%s %s", name, strings.Join(args, " "))
				Expect(stderr).To(ContainSubstring("Storm"), "%s %s", name, strings.Join(args, " "))
			}
		})
	}

	for _, name := range allSamples {
		It("names "+name+" in -h, not the path go run built it at", func() {
			_, stderr, exit := sample(Scaled(10*time.Second), name, "-h")
			Expect(exit).To(Equal(0), stderr)
			Expect(stderr).To(HavePrefix("Usage of "+name+":"), "flag's own usage names os.Args[0], a build cache path under go run")
			Expect(stderr).To(ContainSubstring("-status"), "every long-running sample serves the status page")
		})
	}

	It("serves the status page with -status while the word count runs", func() {
		// A port of its own, then free again: the sample listens on it.
		stdout, stderr, exit := sample(Scaled(20*time.Second), "wordcount", "-duration", "1s", "-status", "127.0.0.1:0")
		Expect(exit).To(Equal(0), "stderr ends:\n%s", sampleTail(stderr))
		Expect(stderr).To(MatchRegexp(`status page at http://127\.0\.0\.1:\d+/`))
		Expect(sampleLastLine(stdout)).To(HavePrefix("summary: "))
	})

	It("rejects arguments after serve by name, before reading any protocol", func() {
		_, stderr, exit := sample(Scaled(10*time.Second), "wordcount", "serve", "count")
		Expect(exit).NotTo(Equal(0))
		Expect(stderr).To(ContainSubstring(`unexpected argument "count"`))
	})
})

// allSamples are the samples the specs build, those of modules of their own
// (jetstream, kafka, statefulcount) through go.work.
var allSamples = []string{"exactlyonce", "guaranteed", "jetstream", "kafka", "multilang", "statefulcount", "trending", "wordcount"}

// sampleLastLine returns the last non-empty line of s.
func sampleLastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// sampleTail returns the last few lines of s, for failure messages.
func sampleTail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// sampleAtoi parses a figure of a summary line.
func sampleAtoi(s string) int {
	n, err := strconv.Atoi(s)
	Expect(err).NotTo(HaveOccurred())
	return n
}

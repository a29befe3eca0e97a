// Package specs_test holds goshelter's ginkgo specs: black-box scenarios that
// replay the reference message flows and check groupings, lifecycle, ticks and
// validation through the public packages only.
//
// Every spec carries a Label naming its area; run one area with
//
//	go tool ginkgo --label-filter=scenario-A ./specs
//
// The specs run on the test kit, package sheltertest (Start, Source, Recorder,
// Clock, the waits); the few helpers it does not offer (trace collector, log
// observer, an unreliable spout, timeout scaling) live in helpers_test.go.
package specs_test

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"
)

func TestSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	// The mutation run (internal/tools/mutate) stops at the first failing spec.
	suite, reporter := GinkgoConfiguration()
	suite.FailFast = suite.FailFast || os.Getenv("GOSHELTER_TEST_FAILFAST") == "1"
	RunSpecs(t, "goshelter specs", suite, reporter)
}

// baseline ignores the goroutines that exist before the first spec: ginkgo's own
// (output interceptor, signal handling) and the test binary's.
var baseline goleak.Option

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(Scaled(5 * time.Second))
	SetDefaultEventuallyPollingInterval(2 * time.Millisecond)
	SetDefaultConsistentlyDuration(Scaled(100 * time.Millisecond))
	SetDefaultConsistentlyPollingInterval(5 * time.Millisecond)
	baseline = goleak.IgnoreCurrent()
})

// Every spec ends with a goroutine leak check. Ginkgo runs DeferCleanup callbacks
// after every AfterEach, last registered first, so a check in an AfterEach would run
// before the spec's own cleanups (which may be what releases a blocked bolt).
// Registering the check as the very first cleanup makes it the very last thing a
// spec does: after the spec's AfterEach and DeferCleanup nodes, and after
// sheltertest.Start's cleanups have stopped the topologies the spec started.
var _ = BeforeEach(func() {
	DeferCleanup(expectNoLeaks)
})

// expectNoLeaks fails the spec if any goroutine started during it is still alive.
// goleak.Find retries for a while, so goroutines that are already on their way
// out (a stopped timer, a finishing actor) are given time to end.
func expectNoLeaks() {
	Expect(goleak.Find(leakOptions()...)).To(Succeed(), "a goroutine outlived the spec")
}

// leakOptions are the goleak options every check in this suite uses.
func leakOptions() []goleak.Option {
	return []goleak.Option{
		baseline,
		// Nothing else: protoactor-go's dead-letter throttle goroutine used to
		// outlive a stop by up to a second; the runtime now sends no late stops
		// and shortens that period, and the "edges" spec below checks it.
	}
}

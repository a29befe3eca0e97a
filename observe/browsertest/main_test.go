package browsertest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: every topology,
// status page and browser a test starts is stopped at its cleanup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

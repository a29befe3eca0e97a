package testsupport

import (
	"os"
	"strconv"
	"time"
)

// TimeoutScaleEnv names the one environment variable that stretches every
// test timeout of every goshelter suite: a positive number, 1 when unset or
// not a positive number.
const TimeoutScaleEnv = "GOSHELTER_TEST_TIMEOUT_SCALE"

// Scaled returns d multiplied by the factor in [TimeoutScaleEnv]. Tests pass
// what they would wait at most (an Eventually's timeout, a context's
// deadline) through it, never a duration they sleep for.
func Scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Scale())
}

// Scale returns the factor in [TimeoutScaleEnv], read on every call so that a
// test may set it with t.Setenv.
func Scale() float64 {
	if s, err := strconv.ParseFloat(os.Getenv(TimeoutScaleEnv), 64); err == nil && s > 0 {
		return s
	}
	return 1
}

// FailFastEnv names the environment variable that, set to 1, stops a ginkgo
// suite at its first failing spec. The mutation run (internal/tools/mutate)
// sets it: a mutant the first spec detects must not wait out every later
// spec's Eventually and be counted as a timeout.
const FailFastEnv = "GOSHELTER_TEST_FAILFAST"

// FailFast reports whether [FailFastEnv] is 1.
func FailFast() bool { return os.Getenv(FailFastEnv) == "1" }

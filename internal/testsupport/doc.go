// Package testsupport is goshelter's shared test support, as zap's
// internal/ztest is zap's: code that only tests import, kept out of the
// runtime's internal packages so that nothing the runtime imports points up
// at the host or the kit. Its subpackages drive whole scenarios:
// statecrash (stateful bolts killed with SIGKILL) and fluxcheck (a Flux
// definition read as Storm reads it).
//
// # Timeouts
//
// Every suite of every module stretches its timeouts with [Scaled], which
// reads one environment variable, [TimeoutScaleEnv]: on a slow or loaded
// machine run
//
//	GOSHELTER_TEST_TIMEOUT_SCALE=3 go test -race work
//
// Nothing here is for production code: Go's internal rule lets every
// goshelter module (the connectors, the stores) import it, and none of
// their non-test files may.
package testsupport

//go:build race

package task_test

// raceDetector tells the allocation tests they run under -race, whose runtime
// allocates now and then on its own.
const raceDetector = true

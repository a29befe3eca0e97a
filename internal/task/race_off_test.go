//go:build !race

package task_test

// raceDetector tells the allocation tests they run under -race.
const raceDetector = false

//go:build race

package main

// raceDetector tells TestCases it runs under -race.
const raceDetector = true

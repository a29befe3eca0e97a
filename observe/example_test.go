package observe_test

import (
	"fmt"
	"time"

	"github.com/goshelter/goshelter/actors"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/supervision"
)

// A report turns a snapshot's counters into Storm UI figures. A running
// topology's snapshot comes from (*supervision.Running).Stats.
func ExampleNewReport() {
	stats := supervision.Stats{Topology: "demo", Uptime: 2 * time.Second, Incarnation: 1, Tasks: []actors.TaskSnapshot{
		{Component: "double", Kind: "bolt", Task: 1, Executed: 1000, ExecuteNanos: int64(500 * time.Millisecond), Acked: 1000},
		{Component: "numbers", Kind: "spout", Task: 2, Emitted: 1000, Acked: 990, Failed: 2, Pending: 8,
			CompleteSamples: 10, CompleteNanos: int64(25 * time.Millisecond)},
	}}
	r := observe.NewReport(nil, stats)
	double, _ := r.Component("double")
	numbers, _ := r.Component("numbers")
	fmt.Printf("double: capacity %.2f, execute latency %.2f ms\n", double.Capacity, double.ExecuteLatencyMs)
	fmt.Printf("numbers: complete latency %.1f ms\n", numbers.CompleteLatencyMs)
	fmt.Println(observe.ProgressLine(r))
	// Output:
	// double: capacity 0.25, execute latency 0.50 ms
	// numbers: complete latency 2.5 ms
	// progress: 2s emitted=1000 (500/s) acked=990 (495/s) failed=2 pending=8
}

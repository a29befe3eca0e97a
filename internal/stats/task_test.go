package stats

import (
	"reflect"
	"testing"
	"time"
)

func TestSum(t *testing.T) {
	tasks := []Task{
		{Component: "split", Kind: "bolt", Task: 1, Executed: 2, Acked: 2, ExecuteTime: 4 * time.Millisecond,
			Transferred: 5, SentTo: map[int]int64{3: 5}, Metrics: map[string]any{"depth": 1}},
		{Component: "split", Kind: "bolt", Task: 2, Executed: 6, Acked: 5, Failed: 1, ExecuteTime: 4 * time.Millisecond,
			ProcessSamples: 1, ProcessTime: time.Millisecond, Transferred: 7, SentTo: map[int]int64{3: 2, 4: 5}},
		{Component: "lines", Kind: "spout", Task: 3, Emitted: 4, CompleteSamples: 2, CompleteTime: 6 * time.Millisecond},
	}
	sums := Sum(tasks)
	split := sums["split"]
	want := Task{Component: "split", Kind: "bolt", Executed: 8, Acked: 7, Failed: 1, ExecuteTime: 8 * time.Millisecond,
		ProcessSamples: 1, ProcessTime: time.Millisecond, Transferred: 12, SentTo: map[int]int64{3: 7, 4: 5},
		Metrics: map[string]any{"depth": 1}, ExecuteLatency: time.Millisecond, ProcessLatency: time.Millisecond}
	if !reflect.DeepEqual(split, want) {
		t.Errorf("sum of split\n got %+v\nwant %+v", split, want)
	}
	if lines := sums["lines"]; lines.Emitted != 4 || lines.CompleteLatency != 3*time.Millisecond || lines.Kind != "spout" {
		t.Errorf("sum of lines %+v", lines)
	}
	if _, ok := sums["typo"]; ok || len(sums) != 2 {
		t.Errorf("sums %v, want exactly split and lines", sums)
	}
	if tasks[0].SentTo[3] != 5 {
		t.Error("summing changed a task's own SentTo")
	}
}

// TestSumOfCheckpoints: a component shows its tasks' last
// checkpoint as the highest id, the slowest task's duration and the bytes of
// all of them.
func TestSumOfCheckpoints(t *testing.T) {
	tasks := []Task{
		{Component: "count", Kind: "bolt", Task: 1, Checkpoint: 4, CheckpointDuration: 3 * time.Millisecond, CheckpointBytes: 100},
		{Component: "count", Kind: "bolt", Task: 2, Checkpoint: 5, CheckpointDuration: time.Millisecond, CheckpointBytes: 20},
		{Component: "count", Kind: "bolt", Task: 3},
	}
	sum := Sum(tasks)["count"]
	if sum.Checkpoint != 5 || sum.CheckpointDuration != 3*time.Millisecond || sum.CheckpointBytes != 120 {
		t.Errorf("sum of count: checkpoint %d, %v, %d bytes; want 5, 3ms, 120 bytes", sum.Checkpoint, sum.CheckpointDuration, sum.CheckpointBytes)
	}
}

// A window's figures are what accumulated since its start; gauges are the
// current ones.
func TestWindow(t *testing.T) {
	base := Task{Task: 1, Emitted: 10, Executed: 4, Acked: 3, Failed: 1, ExecuteTime: 4 * time.Millisecond, Pending: 9}
	cur := Task{Task: 1, Emitted: 25, Executed: 10, Acked: 8, Failed: 2, ExecuteTime: 16 * time.Millisecond, Pending: 2,
		CompleteSamples: 2, CompleteTime: 6 * time.Millisecond}
	want := Task{Task: 1, Emitted: 15, Executed: 6, Acked: 5, Failed: 1, ExecuteTime: 12 * time.Millisecond, Pending: 2,
		CompleteSamples: 2, CompleteTime: 6 * time.Millisecond, ExecuteLatency: 2 * time.Millisecond, CompleteLatency: 3 * time.Millisecond}
	if got := Window(cur, base); !reflect.DeepEqual(got, want) {
		t.Errorf("window\n got %+v\nwant %+v", got, want)
	}
	if got := Window(cur, Task{}); got.Emitted != 25 || got.ExecuteLatency != cur.ExecuteTime/10 {
		t.Errorf("a window from the start %+v, want the totals", got)
	}
}

// A task with no samples has nil histograms: the sum of a component is the
// histograms of the tasks that have them, in whichever order they come.
func TestSumOfHistogramsSkipsTasksWithout(t *testing.T) {
	with := Task{Component: "c", Task: 1, ExecuteHistogram: []int64{1, 2, 3}}
	without := Task{Component: "c", Task: 2}
	for _, tasks := range [][]Task{{with, without}, {without, with}} {
		got := Sum(tasks)["c"].ExecuteHistogram
		if !reflect.DeepEqual(got, []int64{1, 2, 3}) {
			t.Errorf("sum of %d tasks in order %d,%d: %v, want [1 2 3]", len(tasks), tasks[0].Task, tasks[1].Task, got)
		}
	}
	if Sum([]Task{without})["c"].ExecuteHistogram != nil {
		t.Error("a component whose tasks have no samples got a histogram")
	}
	if with.ExecuteHistogram[0] != 1 {
		t.Error("summing changed a task's own histogram")
	}
}

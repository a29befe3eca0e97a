package sheltertest

import (
	"slices"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/dsl"
)

// A Recorder keeps the Post of each task it was created for, the latest
// incarnation's, by task id: what Clock.Quiet posts to. A task without one
// (made by hand) has nothing to wait for.
func TestRecorderKeepsEachTasksPost(t *testing.T) {
	r := new(Recorder[int])
	var posted []int
	post := func(task int) func(func(dsl.Collector)) {
		return func(func(dsl.Collector)) { posted = append(posted, task) }
	}
	r.created(dsl.TaskInfo{Task: 2, Post: post(-2)})
	r.created(dsl.TaskInfo{Task: 1, Post: post(1)})
	r.created(dsl.TaskInfo{Task: 2, Post: post(2)}) // task 2 restarted
	r.created(dsl.TaskInfo{Task: 3})
	for _, p := range r.postsOf() {
		p(func(dsl.Collector) {})
	}
	if !slices.Equal(posted, []int{1, 2}) {
		t.Errorf("posted to %v, want tasks [1 2], the restarted task's latest Post", posted)
	}
}

// A Source keeps the Post of each task it feeds, the latest incarnation's.
func TestSourceKeepsEachTasksPost(t *testing.T) {
	s := NewSource(1, 2)
	var posted []int
	post := func(task int) func(func(dsl.Collector)) {
		return func(func(dsl.Collector)) { posted = append(posted, task) }
	}
	s.feed(dsl.TaskInfo{Task: 2, Post: post(-2)})
	s.feed(dsl.TaskInfo{Task: 1, Post: post(1)})
	s.feed(dsl.TaskInfo{Task: 2, Post: post(2)}) // task 2 restarted
	s.feed(dsl.TaskInfo{Task: 3})
	for _, p := range s.postsOf() {
		p(func(dsl.Collector) {})
	}
	if !slices.Equal(posted, []int{1, 2}) {
		t.Errorf("posted to %v, want tasks [1 2], the restarted task's latest Post", posted)
	}
}

// SpoutPerTask's task of an index it has no source for fails naming the
// count: a panic the runtime turns into the task's failure.
func TestSpoutPerTaskWithoutASourceForATaskFails(t *testing.T) {
	spec := SpoutPerTask(NewSource(1))
	defer func() {
		p := recover()
		if err, ok := p.(error); !ok || !strings.Contains(err.Error(), "has no source: SpoutPerTask was given 1") {
			t.Errorf("panic %v, want one naming the sources given", p)
		}
	}()
	spec.Typed(dsl.TaskInfo{Component: "nums", Task: 2, Index: 1, Parallelism: 2})
}

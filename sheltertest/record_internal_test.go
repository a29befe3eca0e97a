package sheltertest

import (
	"slices"
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

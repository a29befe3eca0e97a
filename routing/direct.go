package routing

import "github.com/goshelter/goshelter/dsl"

// EmitSpoutDirect routes a spout's tuple to task only, on a stream whose
// subscribers use direct grouping (Storm's emitDirect from a spout). When
// tracked is true and the edge that reaches task is anchored, it starts a tree
// and returns its root; otherwise it returns 0. It fails, routing nothing, when
// the stream is not direct or task does not subscribe to it.
func (r *Router) EmitSpoutDirect(task int, tuple any, tracked bool) (root uint64, err error) {
	s, err := r.stream(tuple)
	if err != nil {
		return 0, err
	}
	if err := r.checkDirect(s, task); err != nil {
		return 0, err
	}
	if tracked && r.tracks && r.anchoredTo(s, task) {
		root = r.ids.Next()
		r.sink.Track(root, r.self.ID)
	}
	r.route(s, tuple, dsl.TupleID{Root: root}, task)
	return root, nil
}

// anchoredTo reports whether the edge of stream s that reaches task is
// anchored: only then does route anchor the delivery into the tree, so only
// then may a tree be started (one nothing anchors would only time out).
func (r *Router) anchoredTo(s *streamOut, task int) bool {
	for i := range s.dists {
		if d := &s.dists[i]; d.route.edge.Anchored && containsTask(d.route.tasks, task) {
			return true
		}
	}
	return false
}

package actors

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
	"github.com/goshelter/goshelter/state"
	"go.uber.org/zap"
)

// A checkpoint of a topology with state is a consistent cut, taken as
// aligned barriers (Chandy and Lamport's snapshot, as Flink aligns it):
//
//  1. Every interval the checkpointer asks each spout task to start
//     checkpoint n. The spout flushes what it emitted, records its source's
//     position and sends barrier n on the data lane of every task it feeds,
//     behind those tuples.
//  2. A bolt task that gets barrier n from one of its senders holds that
//     sender's later inputs until barrier n came from all of them. Then
//     everything before the cut, and nothing after it, has been executed:
//     it snapshots what its state changed (prepare), sets aside the acks of
//     the inputs it executed since the last barrier, flushes its emits,
//     sends barrier n on, reports, and executes the inputs it held.
//  3. When every spout and bolt task reported, the checkpointer writes all
//     changes and positions with id n in one atomic commit of the store.
//     Then each stateful bolt acks the inputs set aside for n (commit).
//
// A checkpoint that does not commit (a task failed, the store refused it,
// the incarnation stopped) is rolled back: nothing of it was written, and
// the next incarnation restores the last committed one and rewinds the
// sources to the positions stored with it. One checkpoint runs at a time.

// cutBarrier marks the cut of checkpoint id in the data its sender (task from)
// sends to one task.
type cutBarrier struct {
	id   uint64
	from int
}

func (*cutBarrier) dataLane() {}

// startCheckpoint asks a spout task to take its part in checkpoint id.
type startCheckpoint struct{ id uint64 }

// committed tells a bolt task that checkpoint id is committed: a stateful
// one acks the inputs it covers, a two-phase handler commits its output.
type committed struct{ id uint64 }

// ckReport is one task's part of a checkpoint.
type ckReport struct {
	id      uint64
	task    int
	changes []state.Change
	size    int
	passed  time.Time // when the task passed the barrier (wall clock)
}

// The store's spaces: one per stateful bolt task and per spout task, by
// component id and task index, and one of the topology's own.
const metaSpace = "meta"

var (
	positionKey = []byte("position")
	preparedKey = []byte("prepared") // what a two-phase handler prepared
)

func taskSpace(kind string, c *dsl.Component, index int) string {
	return fmt.Sprintf("%s/%s/%d", kind, c.ID, index)
}

func parallelismKey(c *dsl.Component) []byte { return []byte("parallelism/" + c.ID) }

// errNoStore is returned by Start for a topology with state and no store.
// supervision.Run refuses such a topology before it gets here, with the
// ErrNoStore users test for; this guards the runtime's own callers.
var errNoStore = errors.New("a topology with stateful bolts needs a store to checkpoint to")

// checkpointer runs the checkpoints of one incarnation on a goroutine of its
// own: it never blocks a task, and a slow store slows only the checkpoints.
type checkpointer struct {
	t        *Topology
	store    state.Store
	interval time.Duration
	reports  chan ckReport // one per participating task and checkpoint: never full
	parts    int           // participating tasks: spouts, and bolts with senders
	spouts   []int
	bolts    []int // bolt tasks with senders: told of each commit
	next     uint64
	last     uint64         // the last checkpoint committed (or read at the start): the store must still be there
	meta     []state.Change // the topology's name and layout (parallelism, what each component stores)

	draining  chan struct{} // closed when the stop's drain begins
	drainOnce sync.Once
	quiet     chan struct{} // closed once a checkpoint begun in the drain committed with nothing in flight
	done      chan struct{} // closed when run returns
}

// newCheckpointer reads where the store is and checks that it was written by
// the same shape of topology.
func newCheckpointer(ctx context.Context, t *Topology, store state.Store) (*checkpointer, error) {
	top := t.inc.plan.Topology
	if store == nil {
		return nil, fmt.Errorf("topology %q: %w (supervision.WithStore)", top.Name, errNoStore)
	}
	last, err := store.Committed(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the last checkpoint of topology %q: %w", top.Name, err)
	}
	if high := t.host.committed.highest(store); last < high {
		return nil, fmt.Errorf("topology %q: the store's last checkpoint is %d, but this process committed %d to it: the store lost checkpoints (restarted empty?), and state and positions would start over from %d: %w",
			top.Name, last, high, last, state.ErrDiverged)
	}
	c := &checkpointer{t: t, store: store, interval: top.Settings.CheckpointInterval, next: last + 1, last: last,
		draining: make(chan struct{}), quiet: make(chan struct{}), done: make(chan struct{})}
	stored := map[string][]byte{}
	err = store.Scan(ctx, metaSpace, func(k, v []byte) error { stored[string(k)] = append([]byte(nil), v...); return nil })
	if err != nil {
		return nil, fmt.Errorf("reading the layout of topology %q: %w", top.Name, err)
	}
	if err := foreignStore(top, stored, last); err != nil {
		return nil, err
	}
	problems := componentProblems(top, stored)
	c.meta = identity(top)
	for _, comp := range top.Components {
		key := parallelismKey(comp)
		if v, ok := stored[string(key)]; ok {
			if n, size := binary.Uvarint(v); size <= 0 || int(n) != comp.Parallelism {
				problems = append(problems, fmt.Errorf("component %q has parallelism %d, but the store's checkpoints were taken with %d: its state and positions are kept by task, so start it with %d or on a new store",
					comp.ID, comp.Parallelism, n, n))
			}
		}
		c.meta = append(c.meta, state.Change{Space: metaSpace, Key: key, Value: binary.AppendUvarint(nil, uint64(comp.Parallelism))})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("topology %q cannot restore its checkpoint %d: %w", top.Name, last, errors.Join(problems...))
	}
	for _, task := range t.inc.plan.Tasks {
		switch {
		case task.Component == nil:
		case task.Component.Spout != nil:
			c.spouts = append(c.spouts, task.ID)
			c.parts++
		case len(senders(t.inc.plan.Topology, task.Component)) > 0:
			c.parts++
			c.bolts = append(c.bolts, task.ID)
		}
	}
	c.reports = make(chan ckReport, c.parts)
	return c, nil
}

// senders returns the components that send to c, each once.
func senders(t *dsl.Topology, c *dsl.Component) []*dsl.Component {
	var out []*dsl.Component
	for _, e := range t.Edges {
		if e.To == c && !containsComponent(out, e.From) {
			out = append(out, e.From)
		}
	}
	return out
}

// receivers returns the tasks of the components c sends to.
func receivers(t *dsl.Topology, c *dsl.Component) []int {
	var comps []*dsl.Component
	var tasks []int
	for _, e := range t.Edges {
		if e.From == c && !containsComponent(comps, e.To) {
			comps = append(comps, e.To)
			tasks = append(tasks, e.To.Tasks...)
		}
	}
	return tasks
}

func containsComponent(cs []*dsl.Component, c *dsl.Component) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// run takes checkpoints until the incarnation ends or a task fails.
func (c *checkpointer) run() {
	defer close(c.done)
	life := c.t.inc.life
	for c.await() {
		id := c.next
		c.next++
		began := time.Now()
		for _, s := range c.spouts {
			c.t.inc.boxes[s].PostUserMessage(startCheckpoint{id: id})
		}
		reports, ok := c.collect(id)
		if !ok || c.t.isBroken() {
			return // rolled back: nothing of it is written
		}
		if err := c.commit(life, id, reports); err != nil {
			if life.Err() == nil {
				c.t.inc.boxes[0].PostUserMessage(failTask{err}) // the incarnation restarts from the last commit
			}
			return
		}
		c.record(id, began, reports)
		for _, b := range c.bolts {
			c.t.inc.boxes[b].PostUserMessage(committed{id})
		}
		c.settleDrain()
	}
}

// await waits an interval on the incarnation's clock, or not at all while
// the stop drains; false means no more checkpoints.
func (c *checkpointer) await() bool {
	select {
	case <-c.draining:
		select {
		case <-c.quiet: // the drain is over: nothing more to cover
			<-c.t.inc.life.Done()
			return false
		default:
			return c.t.inc.life.Err() == nil && !c.t.isBroken()
		}
	default:
	}
	due := make(chan struct{}, 1)
	timer := c.t.inc.clock.AfterFunc(c.interval, func() { due <- struct{}{} })
	defer timer.Stop()
	select {
	case <-due:
	case <-c.draining:
	case <-c.t.broken:
		return false
	case <-c.t.inc.life.Done():
		return false
	}
	return !c.t.isBroken()
}

// collect gathers every participant's report of checkpoint id.
func (c *checkpointer) collect(id uint64) ([]ckReport, bool) {
	reports := make([]ckReport, 0, c.parts)
	for len(reports) < c.parts {
		select {
		case r := <-c.reports:
			if r.id == id {
				reports = append(reports, r)
			}
		case <-c.t.broken:
			return nil, false
		case <-c.t.inc.life.Done():
			return nil, false
		}
	}
	return reports, true
}

func (c *checkpointer) commit(ctx context.Context, id uint64, reports []ckReport) error {
	n := len(c.meta)
	for _, r := range reports {
		n += len(r.changes)
	}
	changes := make([]state.Change, 0, n)
	changes = append(changes, c.meta...)
	for _, r := range reports {
		changes = append(changes, r.changes...)
	}
	if err := c.store.Commit(ctx, state.Checkpoint{ID: id, Previous: c.last, Changes: changes}); err != nil {
		return fmt.Errorf("committing checkpoint %d of topology %q: %w", id, c.t.inc.plan.Topology.Name, err)
	}
	c.last = id
	c.t.host.committed.raise(c.store, id)
	return nil
}

// record publishes each task's part of committed checkpoint id.
func (c *checkpointer) record(id uint64, began time.Time, reports []ckReport) {
	for _, r := range reports {
		s := c.t.inc.stats[r.task]
		s.Checkpoint.Store(int64(id))
		s.CheckpointNanos.Store(int64(r.passed.Sub(began)))
		s.CheckpointBytes.Store(int64(r.size))
	}
}

// beginDrain makes checkpoints follow each other without waiting, so that
// the inputs of stateful bolts are acked and the stop's drain can end; the
// first checkpoint begun after this covers everything the spouts emitted.
func (c *checkpointer) beginDrain() { c.drainOnce.Do(func() { close(c.draining) }) }

// settleDrain ends the drain's checkpoints once one committed with nothing
// in flight.
func (c *checkpointer) settleDrain() {
	select {
	case <-c.draining:
	default:
		return
	}
	select {
	case <-c.quiet:
	default:
		if c.t.inc.gauge.n.Load() == 0 {
			close(c.quiet)
		}
	}
}

// awaitQuiet waits until a checkpoint begun in the drain committed with
// nothing in flight, ctx ends, or a task fails.
func (c *checkpointer) awaitQuiet(ctx context.Context) {
	select {
	case <-c.quiet:
	case <-c.done:
	case <-ctx.Done():
		c.t.inc.log.Warn("stopped before a last checkpoint covered everything: the next start resumes from the last one committed")
	}
}

// report hands a task's part of checkpoint id to the checkpointer.
func (c *checkpointer) report(r ckReport) {
	r.passed = time.Now()
	c.reports <- r
}

// restoreBolt loads a stateful bolt task's state from the last commit.
func (c *checkpointer) restoreBolt(ctx context.Context, b *boltTask, st component.StateTask) error {
	space := taskSpace("bolt", b.task.Component, b.task.Index)
	if err := c.store.Scan(ctx, space, st.RestoreState); err != nil {
		return fmt.Errorf("restoring the state of bolt %q task %d: %w", b.task.Component.ID, b.task.Index, err)
	}
	return nil
}

// recoverSink hands a two-phase handler what it prepared for the last
// committed checkpoint (nil if none), before its first input.
func (c *checkpointer) recoverSink(ctx context.Context, b *boltTask, tp component.TwoPhase) error {
	var prepared []byte
	space := taskSpace("sink", b.task.Component, b.task.Index)
	err := c.store.Scan(ctx, space, func(k, v []byte) error {
		if string(k) == string(preparedKey) {
			prepared = append([]byte{}, v...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading what bolt %q task %d prepared for the last checkpoint: %w", b.task.Component.ID, b.task.Index, err)
	}
	if err := tp.RecoverCheckpoint(prepared); err != nil {
		return fmt.Errorf("bolt %q task %d: recovering its part of the last checkpoint: %w", b.task.Component.ID, b.task.Index, err)
	}
	return nil
}

// rewindSpout rewinds a spout task's source to its position in the last
// commit, if there is one.
func (c *checkpointer) rewindSpout(ctx context.Context, s *spoutTask, p component.PositionedSpout) error {
	var pos []byte
	space := taskSpace("spout", s.task.Component, s.task.Index)
	err := c.store.Scan(ctx, space, func(k, v []byte) error {
		if string(k) == string(positionKey) {
			pos = append([]byte{}, v...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the position of spout %q task %d: %w", s.task.Component.ID, s.task.Index, err)
	}
	if pos == nil {
		return nil // no checkpoint yet: the source starts where it starts
	}
	if err := p.RewindSource(pos); err != nil {
		return fmt.Errorf("rewinding spout %q task %d to its checkpointed position: %w", s.task.Component.ID, s.task.Index, err)
	}
	s.log.Info("source rewound to the last checkpoint", zap.Int("bytes", len(pos)))
	return nil
}

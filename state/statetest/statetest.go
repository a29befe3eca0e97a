package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goshelter/goshelter/state"
)

// Run checks that the stores open returns keep the [state.Store] contract,
// with one subtest per promise. open must return a new, empty store each time
// it is called; Run closes every store it opens.
func Run(t *testing.T, open func(t *testing.T) state.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s state.Store)
	}{
		{"Empty", testEmpty},
		{"Committed", testCommitted},
		{"ScanOrder", testScanOrder},
		{"Spaces", testSpaces},
		{"Delete", testDelete},
		{"Overwrite", testOverwrite},
		{"EmptyValue", testEmptyValue},
		{"Stale", testStale},
		{"Diverged", testDiverged},
		{"CommitCopies", testCommitCopies},
		{"ScanCopies", testScanCopies},
		{"ScanError", testScanError},
		{"Cancelled", testCancelled},
		{"ConcurrentScans", testConcurrentScans},
		{"ConcurrentCommits", testConcurrentCommits},
		{"Close", testClose},
		{"Large", testLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// RunDurable checks that a durable store keeps what it committed across a
// close and a reopen: open(t, dir) must open the store kept in dir, and
// return a new, empty store for a new dir. RunDurable closes every store it
// opens.
func RunDurable(t *testing.T, open func(t *testing.T, dir string) state.Store) {
	t.Helper()
	t.Run("ReopenEmpty", func(t *testing.T) {
		dir := t.TempDir()
		closeStore(t, open(t, dir))
		s := open(t, dir)
		defer closeStore(t, s)
		wantCommitted(t, s, 0)
		wantSpace(t, s, "a", nil)
	})
	t.Run("Reopen", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir)
		want := model{}
		commit(t, s, want, 1,
			set("a", "k1", "v1"), set("a", "k2", "v2"), set("ab", "k", "x"),
			set("a/b", "\x00", "\xff"), set("", "", ""))
		commit(t, s, want, 2, del("a", "k1"), set("a", "k2", "v2b"), set("b", "\xff\xff", "z"))
		commit(t, s, want, 4, del("ab", "k"), set("a", "k3", "v3"))
		closeStore(t, s)

		s = open(t, dir)
		wantCommitted(t, s, 4)
		want.check(t, s)
		if err := s.Commit(ctx(), state.Checkpoint{ID: 4, Previous: 4, Changes: changes(set("a", "k2", "stale"))}); !errors.Is(err, state.ErrStale) {
			t.Fatalf("Commit(4) after reopen at 4 = %v, want ErrStale", err)
		}
		commit(t, s, want, 5, set("a", "k1", "again"), del("b", "\xff\xff"))
		closeStore(t, s)

		s = open(t, dir)
		defer closeStore(t, s)
		wantCommitted(t, s, 5)
		want.check(t, s)
	})
	t.Run("ReopenLarge", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir)
		want := model{}
		commit(t, s, want, 1, largeChanges(10000, "v1")...)
		commit(t, s, want, 2, largeChanges(5000, "v2")...)
		closeStore(t, s)
		s = open(t, dir)
		defer closeStore(t, s)
		wantCommitted(t, s, 2)
		want.check(t, s)
	})
}

func testEmpty(t *testing.T, s state.Store) {
	wantCommitted(t, s, 0)
	for _, space := range []string{"", "a", "\x00"} {
		wantSpace(t, s, space, nil)
	}
}

func testCommitted(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("a", "k", "v"))
	wantCommitted(t, s, 1)
	// IDs may skip: a checkpoint the runtime abandoned is never committed.
	commit(t, s, want, 7)
	wantCommitted(t, s, 7)
	commit(t, s, want, 1<<63+5, set("a", "k", "w"))
	wantCommitted(t, s, 1<<63+5)
	want.check(t, s)
}

// orderKeys are sorted by bytes.Compare; separators and the extreme bytes
// catch a store that orders by something else (signed bytes, length, a
// terminator in an encoding).
var orderKeys = []string{
	"", "\x00", "\x00\x00", "\x00\x01", "\x01", "/", "0", "9", "A", "a", "a\x00",
	"a/", "a/b", "a0", "aa", "b", "\x7f", "\x80", "\xfe", "\xff", "\xff\x00", "\xff\xff",
}

func testScanOrder(t *testing.T, s state.Store) {
	want := model{}
	// Written out of order, over two checkpoints, so that neither insertion
	// order nor one batch's order passes for sorting.
	var first, second []change
	for i, j := range []int{13, 2, 20, 0, 7, 18, 5, 11, 1, 21, 9, 16, 3, 14, 19, 6, 10, 4, 15, 8, 17, 12} {
		c := set("order", orderKeys[j], "v"+strconv.Itoa(j))
		if i%2 == 0 {
			first = append(first, c)
		} else {
			second = append(second, c)
		}
	}
	commit(t, s, want, 1, first...)
	commit(t, s, want, 2, second...)
	got := scan(t, s, "order")
	if len(got) != len(orderKeys) {
		t.Fatalf("Scan returned %d keys, want %d: %q", len(got), len(orderKeys), got)
	}
	for i, kv := range got {
		if kv.key != orderKeys[i] {
			t.Fatalf("Scan's key %d = %q, want %q (all: %q)", i, kv.key, orderKeys[i], got)
		}
	}
	want.check(t, s)
}

func testSpaces(t *testing.T, s state.Store) {
	want := model{}
	// Each pair would share a key in a store that joins space and key with a
	// separator (or nothing) instead of keeping them apart.
	commit(t, s, want, 1,
		set("a", "bx", "a|bx"), set("ab", "x", "ab|x"),
		set("a", "b/x", "a|b/x"), set("a/b", "x", "a/b|x"),
		set("a", "\x00x", "a|0x"), set("a\x00", "x", "a0|x"),
		set("a", "\xffx", "a|ffx"), set("a\xff", "x", "a0|x"),
		set("", "a", "|a"), set("", "", "|"),
		set("b", "k", "b|k"),
	)
	// A space that sorts right after another's keys, and one that is empty.
	commit(t, s, want, 2, set("a0", "k", "a0|k"), del("ab", "x"), set("ab", "y", "ab|y"))
	want.check(t, s)
	for _, space := range []string{"a", "ab", "a/b", "a\x00", "a\xff", "", "b", "a0"} {
		if len(want[space]) == 0 {
			t.Fatalf("model lost space %q", space)
		}
	}
	wantSpace(t, s, "c", nil)
	wantSpace(t, s, "a/", nil)
	wantSpace(t, s, "\x00", nil)
}

func testDelete(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("d", "k1", "1"), set("d", "k2", "2"), set("d", "k3", "3"), set("e", "k1", "e"))
	commit(t, s, want, 2, del("d", "k1"), del("d", "missing"), del("nowhere", "k"))
	want.check(t, s)
	// Within a checkpoint, the later change of a key wins.
	commit(t, s, want, 3, del("d", "k2"), set("d", "k2", "2b"), set("d", "k3", "3b"), del("d", "k3"))
	want.check(t, s)
	// A delete ignores Value.
	commit(t, s, want, 4, state.Change{Space: "d", Key: []byte("k2"), Value: []byte("ignored"), Delete: true})
	want.check(t, s)
	commit(t, s, want, 5, del("e", "k1"))
	want.check(t, s)
	wantSpace(t, s, "e", nil)
}

func testOverwrite(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("o", "k", "first"), set("o", "j", "a long first value"))
	commit(t, s, want, 2, set("o", "k", "second, longer than the first"), set("o", "j", "b"))
	want.check(t, s)
	commit(t, s, want, 3, set("o", "k", "x"), set("o", "k", "y"), set("o", "k", "z"))
	want.check(t, s)
}

func testEmptyValue(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1,
		state.Change{Space: "v", Key: []byte("nil")},
		state.Change{Space: "v", Key: []byte("empty"), Value: []byte{}},
		set("v", "full", "x"))
	got := scan(t, s, "v")
	if len(got) != 3 {
		t.Fatalf("Scan = %q, want the keys empty, full and nil: a nil Value without Delete sets an empty value", got)
	}
	want.check(t, s)
}

func testStale(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 977, set("s", "k", "v977"))
	commit(t, s, want, 1001, set("s", "k", "v1001"), set("s", "j", "j"))
	for _, id := range []uint64{1001, 977, 999, 1, 0} {
		// Previous is right: a stale ID is refused whatever Previous says.
		err := s.Commit(ctx(), state.Checkpoint{ID: id, Previous: 1001, Changes: changes(
			set("s", "k", "stale"), del("s", "j"), set("s", "new", "stale"), set("other", "k", "stale"))})
		if !errors.Is(err, state.ErrStale) {
			t.Fatalf("Commit(%d) with 1001 committed = %v, want an error wrapping ErrStale", id, err)
		}
		if msg := err.Error(); !strings.Contains(msg, strconv.FormatUint(id, 10)) || !strings.Contains(msg, "1001") {
			t.Errorf("Commit(%d)'s error %q does not name both IDs", id, msg)
		}
		wantCommitted(t, s, 1001)
		want.check(t, s)
		wantSpace(t, s, "other", nil)
	}
	commit(t, s, want, 1002, set("s", "k", "v1002"))
	want.check(t, s)
}

// testDiverged checks the compare of Previous with the committed ID: a
// store that went back (restarted empty) or that another writer moved on
// refuses the commit and changes nothing.
func testDiverged(t *testing.T, s state.Store) {
	want := model{}
	// An empty store whose writer committed 7 before: it came back empty.
	diverged(t, s, want, 8, 7, 0)
	commit(t, s, want, 1, set("d", "k", "v1"))
	commit(t, s, want, 2, set("d", "k", "v2"))
	commit(t, s, want, 3, set("d", "k", "v3"))
	diverged(t, s, want, 4, 7, 3) // behind its writer
	diverged(t, s, want, 5, 2, 3) // another writer committed 3
	diverged(t, s, want, 9, 0, 3)
	// A stale ID is ErrStale, whatever Previous says.
	if err := s.Commit(ctx(), state.Checkpoint{ID: 3, Previous: 9, Changes: changes(set("d", "k", "stale"))}); !errors.Is(err, state.ErrStale) || errors.Is(err, state.ErrDiverged) {
		t.Fatalf("Commit(3 after 9) with 3 committed = %v, want ErrStale only", err)
	}
	commit(t, s, want, 4, set("d", "k", "v4"))
	want.check(t, s)
}

// diverged commits id after prev on a store at committed and wants
// ErrDiverged naming the IDs, and nothing changed.
func diverged(t *testing.T, s state.Store, want model, id, prev, committed uint64) {
	t.Helper()
	err := s.Commit(ctx(), state.Checkpoint{ID: id, Previous: prev, Changes: changes(set("d", "k", "diverged"), set("d", "new", "diverged"))})
	if !errors.Is(err, state.ErrDiverged) || errors.Is(err, state.ErrStale) {
		t.Fatalf("Commit(%d after %d) with %d committed = %v, want an error wrapping ErrDiverged", id, prev, committed, err)
	}
	for _, n := range []uint64{id, prev, committed} {
		if !strings.Contains(err.Error(), strconv.FormatUint(n, 10)) {
			t.Errorf("Commit(%d after %d)'s error %q does not name %d", id, prev, err, n)
		}
	}
	wantCommitted(t, s, committed)
	want.check(t, s)
	if len(want["d"]) == 0 {
		wantSpace(t, s, "d", nil)
	}
}

func testCommitCopies(t *testing.T, s state.Store) {
	want := model{}
	key := []byte("key-1")
	value := []byte("value-1")
	buf := []byte("shared")
	c := state.Checkpoint{ID: 1, Changes: []state.Change{
		{Space: "c", Key: key, Value: value},
		{Space: "c", Key: buf[:3], Value: buf[3:]},
	}}
	if err := s.Commit(ctx(), c); err != nil {
		t.Fatalf("Commit(1): %v", err)
	}
	want.apply(c.Changes)
	// The caller reuses its buffers once Commit returns.
	for _, b := range [][]byte{key, value, buf} {
		for i := range b {
			b[i] = '#'
		}
	}
	want.check(t, s)
}

func testScanCopies(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("c", "k1", "value-1"), set("c", "k2", "value-2"), set("c", "k3", ""))
	// fn may scribble over its arguments (a decoder working in place): the
	// committed state must not change.
	for range 2 {
		err := s.Scan(ctx(), "c", func(key, value []byte) error {
			for i := range key {
				key[i] = '#'
			}
			for i := range value {
				value[i] = '#'
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		want.check(t, s)
	}
}

func testScanError(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("e", "1", "a"), set("e", "2", "b"), set("e", "3", "c"), set("e", "4", "d"))
	stop := errors.New("fn stops here")
	var seen []string
	err := s.Scan(ctx(), "e", func(key, _ []byte) error {
		seen = append(seen, string(key))
		if len(seen) == 2 {
			return fmt.Errorf("at %q: %w", key, stop)
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Scan = %v, want fn's error", err)
	}
	if len(seen) != 2 || seen[0] != "1" || seen[1] != "2" {
		t.Fatalf("fn saw %q, want the scan to stop after [1 2]", seen)
	}
	want.check(t, s)
}

func testCancelled(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("x", "k", "v1"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Commit(cancelled, state.Checkpoint{ID: 2, Previous: 1, Changes: changes(set("x", "k", "v2"), set("x", "j", "v2"))})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	// A commit that reports the context's error must not have happened.
	wantCommitted(t, s, 1)
	want.check(t, s)

	if _, err := s.Committed(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Committed with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	called := false
	err = s.Scan(cancelled, "x", func(_, _ []byte) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Scan with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if called {
		t.Errorf("Scan with a cancelled context called fn")
	}

	// A context cancelled during a scan ends it.
	commit(t, s, want, 3, set("x", "a", "1"), set("x", "b", "2"), set("x", "c", "3"))
	during, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err = s.Scan(during, "x", func(_, _ []byte) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("Scan whose context fn cancels = %v after %d calls, want context.Canceled after 1", err, n)
	}
}

// testConcurrentScans checks that a scan sees one checkpoint, not a mix of
// two, while commits go on.
func testConcurrentScans(t *testing.T, s state.Store) {
	const keys, commits, readers = 8, 60, 3
	var wg sync.WaitGroup
	errs := make(chan error, readers+1)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for id := uint64(1); id <= commits; id++ {
			var c state.Checkpoint
			c.ID, c.Previous = id, id-1
			for k := range keys {
				c.Changes = append(c.Changes, set("c", "k"+strconv.Itoa(k), strconv.FormatUint(id, 10)))
			}
			if err := s.Commit(ctx(), c); err != nil {
				errs <- fmt.Errorf("Commit(%d): %w", id, err)
				return
			}
		}
	}()
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := uint64(0)
			for scans := 0; ; scans++ {
				select {
				case <-done:
					if scans > 0 {
						return
					}
				default:
				}
				before, err := s.Committed(ctx())
				if err != nil {
					errs <- err
					return
				}
				var got []uint64
				err = s.Scan(ctx(), "c", func(_, value []byte) error {
					v, err := strconv.ParseUint(string(value), 10, 64)
					got = append(got, v)
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("Scan: %w", err)
					return
				}
				if len(got) == 0 && before == 0 {
					continue
				}
				if len(got) != keys {
					errs <- fmt.Errorf("Scan saw %d keys, want %d (values %v)", len(got), keys, got)
					return
				}
				for _, v := range got {
					if v != got[0] {
						errs <- fmt.Errorf("Scan saw values of several checkpoints: %v", got)
						return
					}
				}
				if got[0] < before || got[0] < last {
					errs <- fmt.Errorf("Scan saw checkpoint %d after Committed said %d and a scan saw %d", got[0], before, last)
					return
				}
				last = got[0]
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantCommitted(t, s, commits)
}

// testConcurrentCommits has several writers race to commit the same IDs, as
// a replaced incarnation and its successor might: each ID commits once, and
// the data is the winner's.
func testConcurrentCommits(t *testing.T, s state.Store) {
	const writers, ids = 4, 30
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners = make(map[uint64][]int)
		errs    = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := uint64(1); id <= ids; id++ {
				v := fmt.Sprintf("w%d-%d", w, id)
				// Each writer finished id-1 (committed it, or found it stale),
				// so the store is at id-1 or above: never diverged.
				err := s.Commit(ctx(), state.Checkpoint{ID: id, Previous: id - 1, Changes: changes(set("w", "last", v), set("w", v, v))})
				switch {
				case err == nil:
					mu.Lock()
					winners[id] = append(winners[id], w)
					mu.Unlock()
				case !errors.Is(err, state.ErrStale):
					errs <- fmt.Errorf("writer %d: Commit(%d): %w", w, id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantCommitted(t, s, ids)
	want := map[string]string{}
	for id, ws := range winners {
		if len(ws) != 1 {
			t.Errorf("checkpoint %d committed by writers %v, want one", id, ws)
		}
		v := fmt.Sprintf("w%d-%d", ws[0], id)
		want[v] = v
		if id == ids {
			want["last"] = v
		}
	}
	if len(winners[ids]) == 0 {
		t.Fatalf("nobody committed checkpoint %d", ids)
	}
	got := map[string]string{}
	for _, kv := range scan(t, s, "w") {
		got[kv.key] = kv.value
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("space w = %v\nwant %v (the winners' writes)", got, want)
	}
}

func testClose(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, set("z", "k", "v"))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Committed(ctx()); !errors.Is(err, state.ErrClosed) {
		t.Errorf("Committed after Close = %v, want ErrClosed", err)
	}
	err := s.Scan(ctx(), "z", func(_, _ []byte) error { return nil })
	if !errors.Is(err, state.ErrClosed) {
		t.Errorf("Scan after Close = %v, want ErrClosed", err)
	}
	if err := s.Commit(ctx(), state.Checkpoint{ID: 2}); !errors.Is(err, state.ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
}

func testLarge(t *testing.T, s state.Store) {
	want := model{}
	commit(t, s, want, 1, largeChanges(10000, "first")...)
	wantCommitted(t, s, 1)
	want.check(t, s)
	// Half the keys change, a quarter go.
	var cs []change
	for i := range 10000 {
		space, key := largeKey(i)
		switch i % 4 {
		case 0, 1:
			cs = append(cs, set(space, key, "second"))
		case 2:
			cs = append(cs, del(space, key))
		}
	}
	commit(t, s, want, 2, cs...)
	want.check(t, s)
}

func largeKey(i int) (space, key string) {
	return "large" + strconv.Itoa(i%10), fmt.Sprintf("key-%05d", i)
}

func largeChanges(n int, value string) []change {
	cs := make([]change, n)
	for i := range cs {
		space, key := largeKey(i)
		cs[i] = set(space, key, value+"-"+key)
	}
	return cs
}

// change is a state.Change written with strings, for readable tables.
type change = state.Change

func set(space, key, value string) change {
	return state.Change{Space: space, Key: []byte(key), Value: []byte(value)}
}

func del(space, key string) change {
	return state.Change{Space: space, Key: []byte(key), Delete: true}
}

func changes(cs ...change) []state.Change { return cs }

func ctx() context.Context { return context.Background() }

// model is what a store should hold: space, key, value.
type model map[string]map[string]string

func (m model) apply(cs []state.Change) {
	for _, c := range cs {
		if c.Delete {
			delete(m[c.Space], string(c.Key))
			continue
		}
		if m[c.Space] == nil {
			m[c.Space] = map[string]string{}
		}
		m[c.Space][string(c.Key)] = string(c.Value)
	}
}

// check compares every space the model has seen with the store's.
func (m model) check(t *testing.T, s state.Store) {
	t.Helper()
	for space, values := range m {
		var want []kv
		for k, v := range values {
			want = append(want, kv{k, v})
		}
		wantSpace(t, s, space, want)
	}
}

// commit commits cs as checkpoint id and applies them to m.
func commit(t *testing.T, s state.Store, m model, id uint64, cs ...change) {
	t.Helper()
	prev, err := s.Committed(ctx())
	if err != nil {
		t.Fatalf("Committed: %v", err)
	}
	if err := s.Commit(ctx(), state.Checkpoint{ID: id, Previous: prev, Changes: cs}); err != nil {
		t.Fatalf("Commit(%d after %d): %v", id, prev, err)
	}
	m.apply(cs)
}

type kv struct{ key, value string }

func scan(t *testing.T, s state.Store, space string) []kv {
	t.Helper()
	var got []kv
	err := s.Scan(ctx(), space, func(key, value []byte) error {
		got = append(got, kv{string(key), string(value)})
		return nil
	})
	if err != nil {
		t.Fatalf("Scan(%q): %v", space, err)
	}
	return got
}

// wantSpace checks that space holds exactly want (in any order), and that
// Scan returns it in ascending key order.
func wantSpace(t *testing.T, s state.Store, space string, want []kv) {
	t.Helper()
	got := scan(t, s, space)
	for i := 1; i < len(got); i++ {
		if bytes.Compare([]byte(got[i-1].key), []byte(got[i].key)) >= 0 {
			t.Fatalf("Scan(%q) returned %q before %q", space, got[i-1].key, got[i].key)
		}
	}
	index := make(map[string]string, len(want))
	for _, w := range want {
		index[w.key] = w.value
	}
	if len(got) != len(index) {
		t.Fatalf("Scan(%q) returned %d keys, want %d%s", space, len(got), len(index), sample(got))
	}
	for _, g := range got {
		if w, ok := index[g.key]; !ok || w != g.value {
			t.Fatalf("Scan(%q) returned %q=%q, want %q (present: %v)", space, g.key, g.value, w, ok)
		}
	}
}

func sample(kvs []kv) string {
	if len(kvs) > 10 {
		return fmt.Sprintf(": %q...", kvs[:10])
	}
	return fmt.Sprintf(": %q", kvs)
}

func wantCommitted(t *testing.T, s state.Store, want uint64) {
	t.Helper()
	got, err := s.Committed(ctx())
	if err != nil {
		t.Fatalf("Committed: %v", err)
	}
	if got != want {
		t.Fatalf("Committed = %d, want %d", got, want)
	}
}

func closeStore(t *testing.T, s state.Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

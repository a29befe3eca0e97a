package redis_test

import (
	"os"

	"context"
	"errors"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/state"
	sredis "github.com/goshelter/goshelter/state/redis"
	"github.com/goshelter/goshelter/state/statetest"
)

// TestMain checks that no goroutine of the clients outlives a test.
func TestMain(m *testing.M) {
	if lines := os.Getenv(statecrash.Env); lines != "" {
		os.Exit(crashChild(lines))
	}
	goleak.VerifyTestMain(m)
}

func TestStore(t *testing.T) {
	srv := startServer(t)
	client := srv.client(t)
	var n atomic.Int64
	statetest.Run(t, func(t *testing.T) state.Store {
		// A prefix per store: the suite's stores share the server.
		return sredis.New(client, "suite"+strconv.FormatInt(n.Add(1), 10))
	})
}

// TestDurable runs the suite's reopen checks across a crash of the server:
// each reopen kills the server with SIGKILL and starts a new one on the
// same directory, with every write fsynced to the append-only file.
func TestDurable(t *testing.T) {
	servers := map[string]*server{}
	statetest.RunDurable(t, func(t *testing.T, dir string) state.Store {
		if srv := servers[dir]; srv != nil {
			srv.kill()
		}
		srv := startServer(t, "--dir", dir, "--appendonly", "yes", "--appendfsync", "always")
		servers[dir] = srv
		return sredis.New(srv.client(t), "durable")
	})
}

// TestPrefixes checks that stores under different prefixes of one server
// are independent, and that one prefix is one store.
func TestPrefixes(t *testing.T) {
	srv := startServer(t)
	client := srv.client(t)
	ctx := context.Background()
	a, b, a2 := sredis.New(client, "a"), sredis.New(client, "b"), sredis.New(client, "a")
	if err := a.Commit(ctx, state.Checkpoint{ID: 5, Changes: []state.Change{{Space: "s", Key: []byte("k"), Value: []byte("a")}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx, state.Checkpoint{ID: 1, Changes: []state.Change{{Space: "s", Key: []byte("k"), Value: []byte("b")}}}); err != nil {
		t.Fatal(err)
	}
	if err := a2.Commit(ctx, state.Checkpoint{ID: 5}); !errors.Is(err, state.ErrStale) {
		t.Fatalf("Commit(5) under prefix a after a committed 5 = %v, want ErrStale", err)
	}
	for _, tc := range []struct {
		s    *sredis.Store
		id   uint64
		want string
	}{{a, 5, "a"}, {b, 1, "b"}, {a2, 5, "a"}} {
		id, err := tc.s.Committed(ctx)
		if err != nil || id != tc.id {
			t.Errorf("Committed = %d, %v, want %d", id, err, tc.id)
		}
		var got string
		err = tc.s.Scan(ctx, "s", func(_, v []byte) error { got = string(v); return nil })
		if err != nil || got != tc.want {
			t.Errorf("Scan = %q, %v, want %q", got, err, tc.want)
		}
	}
}

// TestWrongType checks that a checkpoint that cannot apply as a whole
// applies not at all: Redis does not roll back a script that fails midway.
func TestWrongType(t *testing.T) {
	srv := startServer(t)
	client := srv.client(t)
	ctx := context.Background()
	s := sredis.New(client, "t")
	if err := s.Commit(ctx, state.Checkpoint{ID: 1, Changes: []state.Change{{Space: "good", Key: []byte("k"), Value: []byte("1")}}}); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "{t}:s:bad", "a string", 0).Err(); err != nil {
		t.Fatal(err)
	}
	err := s.Commit(ctx, state.Checkpoint{ID: 2, Previous: 1, Changes: []state.Change{
		{Space: "good", Key: []byte("k"), Value: []byte("2")},
		{Space: "bad", Key: []byte("k"), Value: []byte("2")},
	}})
	if err == nil || !strings.Contains(err.Error(), "{t}:s:bad") || !strings.Contains(err.Error(), srv.addr) {
		t.Fatalf("Commit over a string key = %v, want an error naming the key and the server", err)
	}
	if id, err := s.Committed(ctx); err != nil || id != 1 {
		t.Fatalf("Committed = %d, %v, want 1", id, err)
	}
	var got string
	if err := s.Scan(ctx, "good", func(_, v []byte) error { got = string(v); return nil }); err != nil || got != "1" {
		t.Fatalf("space good = %q, %v, want 1: the failed checkpoint applied in part", got, err)
	}
}

func TestEmptyPrefix(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with an empty prefix did not panic")
		}
	}()
	sredis.New(nil, "")
}

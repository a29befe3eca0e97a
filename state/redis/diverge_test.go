package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/goshelter/goshelter/sheltertest"
	"github.com/goshelter/goshelter/state"
	sredis "github.com/goshelter/goshelter/state/redis"
	"github.com/goshelter/goshelter/supervision"
)

// TestServerRestartedEmptyStopsTheTopology is issue 31's Redis that comes
// back empty after a crash (no persistence): on main the topology took the
// empty store for checkpoint 0 and carried on without its state or
// positions (7,093 of 8,000 counted). Now the first commit or restart that
// meets the empty store fails with state.ErrDiverged, and the topology stops
// without restarting from nothing.
func TestServerRestartedEmptyStopsTheTopology(t *testing.T) {
	srv := startServer(t)
	client := redis.NewClient(&redis.Options{Addr: srv.addr, MaxRetries: -1})
	defer client.Close()
	store := sredis.New(client, "diverge")
	const lines = 8000
	log := sheltertest.NewLog(statecrash.Lines(lines)...)
	topo, err := statecrash.Topology(log, 100*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	// Restarts enough to outlast the outage: only the divergence may stop it.
	r, err := supervision.Run(context.Background(), topo, supervision.WithStore(store), supervision.WithLogger(zap.NewNop()),
		supervision.WithRestarts(supervision.Restarts{Base: 5 * time.Millisecond, Cap: 50 * time.Millisecond, Max: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(context.Background())

	deadline := time.Now().Add(testsupport.Scaled(20 * time.Second))
	var before uint64
	for before < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint committed: %d", before)
		}
		before, _ = store.Committed(context.Background())
		time.Sleep(time.Millisecond) // a poll of the store, bounded by deadline: it has nothing to await
	}
	acked := log.Acked()
	srv = srv.restartEmpty(t)

	select {
	case <-r.Done():
	case <-time.After(testsupport.Scaled(20 * time.Second)):
		t.Fatalf("the topology still runs on the emptied store (%d restarts, %d of %d lines acked)", r.Stats().Restarts, log.Acked(), lines)
	}
	waitErr := r.Wait()
	if err := waitErr; !errors.Is(err, state.ErrDiverged) || !errors.Is(err, supervision.ErrGaveUp) {
		t.Fatalf("Wait = %v, want an error wrapping state.ErrDiverged and supervision.ErrGaveUp", err)
	}
	after, err := sredis.New(srv.client(t), "diverge").Committed(context.Background())
	if err != nil || after != 0 {
		t.Fatalf("Committed on the new server = %d, %v: want nothing committed on the empty store", after, err)
	}
	t.Logf("committed %d (%d of %d lines acked) before the server restarted empty; the topology stopped after %d restarts: %v",
		before, acked, lines, r.Stats().Restarts, waitErr)
}

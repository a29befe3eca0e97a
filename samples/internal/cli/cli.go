// Package cli gives the samples one command line: a usage text that names the
// program (go run would otherwise print its build cache path), and -status,
// which serves the status page of the running topology.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/observe"
	"github.com/goshelter/goshelter/supervision"
)

// Usage sets the usage text of the command line: "Usage of name: about",
// then the flags. flag's own names os.Args[0], which under go run is a path
// in the build cache.
func Usage(name, about string) {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage of %s: %s\n", name, about)
		flag.PrintDefaults()
	}
}

// StatusFlag registers -status on the command line, and each alias as
// another name of it (wordcount's docs say -ui).
func StatusFlag(aliases ...string) *string {
	addr := new(string)
	flag.StringVar(addr, "status", "", "serve the status page (and Storm UI's REST API under /api/v1, /metrics, /stats, /graph) at this address while running, e.g. 127.0.0.1:8080")
	for _, a := range aliases {
		flag.StringVar(addr, a, "", "the same as -status")
	}
	return addr
}

// ServeStatus serves the status page of r, a run of topo, at addr, and says
// where on stderr; with addr empty it serves nothing. The returned func stops
// the server (and joins its goroutine); it is never nil.
func ServeStatus(addr string, topo *dsl.Topology, r *supervision.Running) (stop func() error, err error) {
	if addr == "" {
		return func() error { return nil }, nil
	}
	srv, err := observe.Listen(addr, topo, r)
	if err != nil {
		return func() error { return nil }, fmt.Errorf("serving the status page: %w", err)
	}
	fmt.Fprintf(os.Stderr, "status page at http://%s/\n", srv.Addr)
	return srv.Close, nil
}

// Await returns when a run should end: once d has passed, when ctx ends (an
// interrupt), when done receives or closes (nil: never), or when the topology
// ends by itself. In that last case it returns why (Running.Wait: a failure
// under WithoutRestarts, supervision giving up), and nil otherwise (an
// interrupt that stopped the topology through Run's ctx included): the
// sample then stops the topology, prints its summary, and returns the error
// only after it.
func Await(ctx context.Context, r *supervision.Running, d time.Duration, done <-chan struct{}) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case <-done:
	case <-r.Done():
		err := r.Wait()
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil // the interrupt stopped it: the person asked for it
		}
		return err
	}
	return nil
}

// Stop stops r, draining, within timeout. A topology that an interrupt
// already stopped (through Run's ctx) is not an error: the person asked for it.
func Stop(r *supervision.Running, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := r.Stop(ctx)
	if errors.Is(err, supervision.ErrStopped) {
		if werr := r.Wait(); werr != nil && !errors.Is(werr, context.Canceled) {
			return werr
		}
		return nil
	}
	return err
}

package multilang

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// Defaults of shell components, for the zero fields of a [Command].
const (
	defaultGracePeriod = 2 * time.Second
	defaultHeartbeat   = time.Second
	// defaultMaxPending is how many inputs may wait to be written to a bolt's
	// child before Execute waits, unless conf key maxPendingKey says otherwise.
	defaultMaxPending = 100
)

// maxPendingKey is Storm's conf key for the inputs a shell bolt queues for its child.
const maxPendingKey = "topology.shellbolt.max.pending"

// def is a shell component's definition, shared by its tasks (and kept in the
// spec's Impl, where Flux and the context find it). Read-only once built.
type def struct {
	cmd        Command // resolved: Path and Args set, Line empty
	err        error   // why cmd cannot run; every task fails with it
	spout      bool
	outputs    []output // in id order
	grace      time.Duration
	heartbeat  time.Duration
	maxMessage int
}

type output struct {
	name string
	typ  reflect.Type
}

func newDef(cmd Command, spout bool) *def {
	d := &def{spout: spout, grace: cmd.GracePeriod, heartbeat: cmd.Heartbeat, maxMessage: cmd.MaxMessage}
	d.cmd, d.err = cmd.resolved()
	if d.grace <= 0 {
		d.grace = defaultGracePeriod
	}
	if d.heartbeat <= 0 {
		d.heartbeat = defaultHeartbeat
	}
	if d.maxMessage <= 0 {
		d.maxMessage = wire.DefaultMaxMessage
	}
	for _, name := range slices.Sorted(maps.Keys(d.cmd.Outputs)) {
		d.outputs = append(d.outputs, output{name: name, typ: reflect.TypeOf(d.cmd.Outputs[name])})
	}
	return d
}

// alias returns the stream id the child uses for stream type t, if it declared one.
func (d *def) alias(t reflect.Type) (string, bool) {
	for _, o := range d.outputs {
		if o.typ == t {
			return o.name, true
		}
	}
	return "", false
}

// defOf returns the definition behind a shell component, or nil for a Go one.
func defOf(c *dsl.Component) *def {
	var impl any
	switch {
	case c.Spout != nil:
		impl = c.Spout.Impl
	case c.Bolt != nil:
		impl = c.Bolt.Impl
	}
	d, _ := impl.(*def)
	return d
}

// streamID names stream s as component c's code knows it, and so as the
// context, Flux and every host name it: a shell component's declared id; for
// a shell spout's output without one, Storm's "default" (what its child emits
// on when it names no stream); otherwise the goshelter stream name.
func streamID(c *dsl.Component, s *dsl.Stream) string {
	if d := defOf(c); d != nil {
		if name, ok := d.alias(s.Type); ok {
			return name
		}
		if d.spout && c.Spout != nil && c.Spout.Output == s.Type {
			return wire.DefaultStream
		}
	}
	return s.Name
}

// streams resolves the stream ids a child emits on to topology streams.
type streams map[string]*dsl.Stream

// resolveOutputs builds a task's stream table. A spout accepts its output
// stream under its declared id ("default" unless declared otherwise) and its
// goshelter name; a bolt accepts its declared ids and every topology stream name.
func resolveOutputs(d *def, topo *dsl.Topology, c *dsl.Component) (streams, error) {
	out := streams{}
	if d.spout {
		s := streamOf(topo, c.Spout.Output)
		out[s.Name] = s
		if _, ok := d.alias(s.Type); !ok {
			out[wire.DefaultStream] = s
		}
	} else {
		for _, s := range topo.Streams {
			out[s.Name] = s
		}
	}
	for _, o := range d.outputs {
		s := streamOf(topo, o.typ)
		switch {
		case s == nil:
			return nil, fmt.Errorf("output %q: type %v is not a stream of the topology (declare it with Streams)", o.name, o.typ)
		case d.spout && o.typ != c.Spout.Output:
			return nil, fmt.Errorf("output %q: a spout emits only its output type %v, not %v", o.name, c.Spout.Output, o.typ)
		}
		out[o.name] = s
	}
	return out, nil
}

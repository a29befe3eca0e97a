package multilang

import (
	"fmt"
	"reflect"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// Defaults for shell components.
const (
	// DefaultGracePeriod is how long a child has to exit after the termination
	// signal before it is killed.
	DefaultGracePeriod = 2 * time.Second
	// DefaultHeartbeat is how often a shell bolt's child gets a heartbeat tuple
	// (more often when topology.subprocess.timeout.secs is shorter than 3 s).
	DefaultHeartbeat = time.Second
	// DefaultMaxPending is how many inputs may wait to be written to a bolt's
	// child before Execute waits, unless conf key [MaxPendingKey] says otherwise.
	DefaultMaxPending = 100
)

// MaxPendingKey is Storm's conf key for the inputs a shell bolt queues for its child.
const MaxPendingKey = "topology.shellbolt.max.pending"

// Option configures a shell component.
type Option interface{ apply(*def) }

type optionFunc func(*def)

func (f optionFunc) apply(d *def) { f(d) }

// Output declares a stream the component's child emits on: stream is the id the
// child uses (Storm's "default" when the child names none) and sample a value of
// the Go struct type its tuples become, which must be a stream of the topology.
// The child's JSON values fill the struct's exported fields in order. A child may
// also name any stream of the topology by its goshelter name. For a spout, the
// type must be the spout's own output type.
func Output(stream string, sample any) Option {
	return optionFunc(func(d *def) {
		d.outputs = append(d.outputs, output{name: stream, typ: reflect.TypeOf(sample)})
	})
}

// WithGracePeriod sets how long the child has to exit after the termination
// signal before it is killed (default [DefaultGracePeriod]).
func WithGracePeriod(g time.Duration) Option { return optionFunc(func(d *def) { d.grace = g }) }

// WithHeartbeat sets how often a bolt's child gets a heartbeat tuple (default
// [DefaultHeartbeat], and at most a third of the subprocess timeout).
func WithHeartbeat(p time.Duration) Option { return optionFunc(func(d *def) { d.heartbeat = p }) }

// WithMaxMessage sets the largest message accepted from the child, in bytes
// (default [DefaultMaxMessage]).
func WithMaxMessage(n int) Option { return optionFunc(func(d *def) { d.maxMessage = n }) }

// def is a shell component's definition, shared by its tasks. Read-only once built.
type def struct {
	cmd        Command
	spout      bool
	outputs    []output
	grace      time.Duration
	heartbeat  time.Duration
	maxMessage int
}

type output struct {
	name string
	typ  reflect.Type
}

func newDef(cmd Command, spout bool, opts []Option) *def {
	d := &def{cmd: cmd, spout: spout, grace: DefaultGracePeriod, heartbeat: DefaultHeartbeat, maxMessage: DefaultMaxMessage}
	for _, o := range opts {
		o.apply(d)
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

// streamID names stream s as component c's code knows it: a shell component's
// declared id, otherwise the goshelter stream name.
func streamID(c *dsl.Component, s *dsl.Stream) string {
	if d := defOf(c); d != nil {
		if name, ok := d.alias(s.Type); ok {
			return name
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
		s := topo.StreamOf(c.Spout.Output)
		out[s.Name] = s
		if _, ok := d.alias(s.Type); !ok {
			out[DefaultStream] = s
		}
	} else {
		for _, s := range topo.Streams {
			out[s.Name] = s
		}
	}
	for _, o := range d.outputs {
		s := topo.StreamOf(o.typ)
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

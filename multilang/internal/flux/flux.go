// Package flux is the schema of the Storm Flux topology definitions that
// multilang.Flux writes: the YAML document Storm's Flux loader reads, with only
// the parts a topology of shell components needs.
package flux

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// The wrapper classes of Apache Storm (flux-wrappers) that run shell
// components: they take the command as their constructor argument.
const (
	ShellSpout = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
	ShellBolt  = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
)

// Def is a Flux topology definition.
type Def struct {
	Name    string         `yaml:"name"`
	Config  map[string]any `yaml:"config,omitempty"`
	Spouts  []Component    `yaml:"spouts"`
	Bolts   []Component    `yaml:"bolts"`
	Streams []Stream       `yaml:"streams"`
}

// Component is a spout or bolt of a definition. Parallelism is its executors
// and NumTasks its tasks (Storm's setNumTasks); Config is its component conf,
// which Flux adds to the component's declaration (addConfigurations).
type Component struct {
	ID              string         `yaml:"id"`
	ClassName       string         `yaml:"className"`
	ConstructorArgs []any          `yaml:"constructorArgs"`
	ConfigMethods   []ConfigMethod `yaml:"configMethods,omitempty"`
	Parallelism     int            `yaml:"parallelism"`
	NumTasks        int            `yaml:"numTasks,omitempty"`
	Config          map[string]any `yaml:"config,omitempty"`
}

// ConfigMethod is a method Flux calls on a component after constructing it
// (setNamedStream).
type ConfigMethod struct {
	Name string `yaml:"name"`
	Args []any  `yaml:"args"`
}

// Stream subscribes a bolt to a component's stream.
type Stream struct {
	Name     string   `yaml:"name"`
	From     string   `yaml:"from"`
	To       string   `yaml:"to"`
	Grouping Grouping `yaml:"grouping"`
}

// Grouping is a Flux grouping: SHUFFLE, LOCAL_OR_SHUFFLE, NONE, FIELDS (Args
// are the field names), ALL or GLOBAL.
type Grouping struct {
	Type     string   `yaml:"type"`
	StreamID string   `yaml:"streamId"`
	Args     []string `yaml:"args,omitempty"`
}

// YAML renders the definition with two-space indentation, as Flux's own
// examples are written.
func (d *Def) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

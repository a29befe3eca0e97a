// Package fluxcheck checks that a Flux definition makes Storm run every
// component with the settings goshelter's Build resolved for it. It reads the
// YAML as Storm does (a component's config over the topology's), on its own
// terms rather than with the exporter's table, so that the two cannot drift
// apart unnoticed; the multilang tests and the samples' tests call it.
package fluxcheck

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"go.yaml.in/yaml/v3"
)

// storm says, for each field of dsl.Settings, the Storm key that carries it
// and the unit Storm reads it in; a field with no key is goshelter's own (a
// served binary derives it again from its own topology). A field added to
// dsl.Settings and missing here fails every Check.
var storm = map[string]struct {
	key  string
	unit time.Duration // 0 for counts and booleans
}{
	"MaxSpoutPending":    {dsl.MaxSpoutPending, 0},
	"AckerTasks":         {dsl.AckerTasks, 0},
	"AckerExecutors":     {dsl.AckerExecutors, 0},
	"ReceiveBufferSize":  {dsl.ReceiveBufferSize, 0},
	"MessageTimeout":     {dsl.MessageTimeout, time.Second},
	"SpoutWait":          {dsl.SpoutWait, time.Millisecond},
	"Debug":              {dsl.Debug, 0},
	"TickFrequency":      {dsl.TickFrequency, time.Second},
	"SubprocessTimeout":  {dsl.SubprocessTimeout, time.Second},
	"BatchFlushInterval": {dsl.BatchFlushInterval, time.Millisecond},
	"CheckpointInterval": {dsl.CheckpointInterval, time.Millisecond},
	"AckerCapacity":      {},
	"BatchSize":          {},
	"WindowMaxTuples":    {},
}

type definition struct {
	Config     map[string]any `yaml:"config"`
	Spouts     []component    `yaml:"spouts"`
	Bolts      []component    `yaml:"bolts"`
	components map[string]component
}

type component struct {
	ID     string         `yaml:"id"`
	Config map[string]any `yaml:"config"`
}

// Check parses fluxYAML and returns an error listing every setting of every
// component of topo that Storm would read differently from the component's
// resolved dsl.Settings. Durations compare in Storm's unit, rounded up (Storm
// reads whole seconds or milliseconds).
func Check(topo *dsl.Topology, fluxYAML []byte) error {
	var def definition
	if err := yaml.Unmarshal(fluxYAML, &def); err != nil {
		return fmt.Errorf("fluxcheck: parsing the definition: %w", err)
	}
	def.components = map[string]component{}
	for _, c := range append(def.Spouts, def.Bolts...) {
		def.components[c.ID] = c
	}
	var problems []string
	st := reflect.TypeFor[dsl.Settings]()
	for i := range st.NumField() {
		if _, ok := storm[st.Field(i).Name]; !ok {
			problems = append(problems, fmt.Sprintf("dsl.Settings.%s: fluxcheck does not say which Storm key carries it", st.Field(i).Name))
		}
	}
	for _, c := range topo.Components {
		fc, ok := def.components[c.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("component %q is not in the definition", c.ID))
			continue
		}
		problems = append(problems, compare(c, def.Config, fc.Config)...)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("fluxcheck: %s", strings.Join(problems, "; "))
	}
	return nil
}

// compare checks one component's settings against what Storm reads for it.
func compare(c *dsl.Component, topoConf, ownConf map[string]any) []string {
	var problems []string
	sv := reflect.ValueOf(c.Settings)
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		k := storm[name]
		if k.key == "" {
			continue
		}
		got, set := ownConf[k.key]
		if !set {
			got, set = topoConf[k.key]
		}
		want := expected(sv.Field(i).Interface(), k.unit)
		if !set && (want == int64(0) || want == false) {
			continue // Storm's default: off
		}
		if !set || fmt.Sprint(got) != fmt.Sprint(want) {
			problems = append(problems, fmt.Sprintf("component %q: %s is %v in Storm (set: %v), want %v (Settings.%s)", c.ID, k.key, got, set, want, name))
		}
	}
	return problems
}

// expected is a setting in the unit Storm reads, rounded up.
func expected(v any, unit time.Duration) any {
	switch v := v.(type) {
	case time.Duration:
		return int64((v + unit - 1) / unit)
	case int:
		return int64(v)
	}
	return v
}

package observe

import (
	"strings"
	"time"

	"github.com/goshelter/goshelter/dsl"
)

// resolvedKeys are the keys goshelter resolves into dsl.Settings, with the
// value the topology runs with: what Storm UI's configuration table shows
// for a key the user never set is the default, and a time is in the key's
// unit. nil leaves the key out (no tick tuples: Storm's default is none).
var resolvedKeys = []struct {
	key   string
	value func(dsl.Settings) any
}{
	{dsl.MaxSpoutPending, func(s dsl.Settings) any { return s.MaxSpoutPending }},
	{dsl.AckerTasks, func(s dsl.Settings) any { return s.AckerTasks }},
	{dsl.AckerExecutors, func(s dsl.Settings) any { return s.AckerExecutors }},
	{dsl.ReceiveBufferSize, func(s dsl.Settings) any { return s.ReceiveBufferSize }},
	{dsl.MessageTimeout, func(s dsl.Settings) any { return s.MessageTimeout }},
	{dsl.SpoutWait, func(s dsl.Settings) any { return s.SpoutWait }},
	{dsl.Debug, func(s dsl.Settings) any { return s.Debug }},
	{dsl.SubprocessTimeout, func(s dsl.Settings) any { return s.SubprocessTimeout }},
	{dsl.BatchFlushInterval, func(s dsl.Settings) any { return s.BatchFlushInterval }},
	{dsl.CheckpointInterval, func(s dsl.Settings) any { return s.CheckpointInterval }},
	{dsl.AckerCapacity, func(s dsl.Settings) any { return s.AckerCapacity }},
	{dsl.BatchSize, func(s dsl.Settings) any { return s.BatchSize }},
	{"topology.bolts.window.max.tuples", func(s dsl.Settings) any { return s.WindowMaxTuples }},
	{dsl.TickFrequency, func(s dsl.Settings) any {
		if s.TickFrequency <= 0 {
			return nil
		}
		return s.TickFrequency
	}},
}

// configuration is the topology's configuration as Storm UI's topology page
// lists it: "topology.name", every key goshelter resolves with the value the
// topology runs with (its conf over the defaults, as dsl.Settings holds
// them), and every other key of its conf as given (Storm's keys goshelter
// passes through, the user's own). A time is a number in the key's unit,
// seconds or milliseconds (keys ending in ".ms" or ".millis"), as Storm
// writes it; a value JSON cannot carry becomes its text. Components' own conf
// is not the topology's: Storm's page does not show it either.
func configuration(topo *dsl.Topology) map[string]any {
	out := make(map[string]any, len(resolvedKeys)+len(topo.Conf)+1)
	for k, v := range jsonSafe(topo.Conf) {
		out[k] = confValue(k, v)
	}
	for _, k := range resolvedKeys {
		if v := k.value(topo.Settings); v != nil {
			out[k.key] = confValue(k.key, v)
		}
	}
	out["topology.name"] = topo.Name
	return out
}

// confValue is v in the unit key counts in: a time.Duration becomes seconds,
// or milliseconds for ".ms" and ".millis" keys (a fraction when it is finer).
func confValue(key string, v any) any {
	d, ok := v.(time.Duration)
	if !ok {
		return v
	}
	unit := time.Second
	if strings.HasSuffix(key, ".ms") || strings.HasSuffix(key, ".millis") {
		unit = time.Millisecond
	}
	if d%unit == 0 {
		return int64(d / unit)
	}
	return float64(d) / float64(unit)
}

package multilang

import (
	"reflect"
	"testing"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// A child sees a tick as Storm sends it: one field, rate_secs, whatever other
// fields goshelter's Tick carries.
func TestShellBoltEncodesTicksAsStormDoes(t *testing.T) {
	b := &shellBolt{names: map[*dsl.Stream]string{}}
	got := b.encode("tick-1", dsl.Tuple{Value: dsl.Tick{RateSecs: 2, Period: 1500 * time.Millisecond}, Source: "__system", Task: -1})
	want := wire.OutTuple{ID: "tick-1", Comp: "__system", Stream: "__tick", Task: -1, Values: []any{2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tick encoded as %+v, want %+v", got, want)
	}
}

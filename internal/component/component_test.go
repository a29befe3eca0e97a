package component_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/component"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEmitErrorNamesTheComponentAndTheStream(t *testing.T) {
	err := &component.EmitError{Component: "split", Stream: "Word", Task: 3, Reason: "task 3 does not subscribe to the stream"}
	want := `component "split" cannot emit Word: task 3 does not subscribe to the stream`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// The dsl's constructors implement the contract without importing this
// package: SpoutEmitter is an alias of an unnamed interface for that reason.
func TestDSLTasksImplementTheContract(t *testing.T) {
	type word struct{ W string }
	spouts := []*dsl.SpoutSpec{
		dsl.Unreliable(func() (word, bool) { return word{}, false }),
		dsl.Reliable(func() (int, word, bool) { return 0, word{}, false }, func(int) {}, func(int) {}),
	}
	for _, s := range spouts {
		if _, ok := s.NewTask(dsl.TaskInfo{}).(component.SpoutTask); !ok {
			t.Errorf("%s spout: NewTask does not make a component.SpoutTask", s.Kind)
		}
	}
	bolts := []*dsl.BoltSpec{
		dsl.AutoAck(func(word, dsl.Emitter) error { return nil }),
		dsl.Terminator(func(word) {}),
		dsl.Manual(func(dsl.TaskInfo) dsl.ManualHandler[word] { return nil }),
	}
	for _, b := range bolts {
		if _, ok := b.NewTask(dsl.TaskInfo{}).(component.BoltTask); !ok {
			t.Errorf("%s bolt: NewTask does not make a component.BoltTask", b.Kind)
		}
	}
}

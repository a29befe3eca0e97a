package state_test

import (
	"testing"

	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/statetest"
)

func TestMemory(t *testing.T) {
	statetest.Run(t, func(*testing.T) state.Store { return state.NewMemory() })
}

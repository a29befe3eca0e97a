package pebble_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/goshelter/goshelter/state"
	"github.com/goshelter/goshelter/state/pebble"
)

func Example() {
	dir, err := os.MkdirTemp("", "checkpoints")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	s, err := pebble.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	err = s.Commit(ctx, state.Checkpoint{ID: 1, Changes: []state.Change{
		{Space: "count/0", Key: []byte("storm"), Value: []byte("2")},
		{Space: "source/0", Key: []byte("offset"), Value: []byte("42")},
	}})
	if err != nil {
		log.Fatal(err)
	}
	s.Close()

	// A restarted topology finds the checkpoint again.
	s, err = pebble.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	id, err := s.Committed(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed:", id)
	err = s.Scan(ctx, "source/0", func(key, value []byte) error {
		fmt.Printf("%s=%s\n", key, value)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// committed: 1
	// offset=42
}

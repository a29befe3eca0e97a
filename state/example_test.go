package state_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/goshelter/goshelter/state"
)

func ExampleNewMemory() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a failure ends the wait
	defer cancel()
	s := state.NewMemory()
	defer s.Close()

	// Checkpoint 1 counts two words of task 3 and records the source's offset.
	err := s.Commit(ctx, state.Checkpoint{ID: 1, Changes: []state.Change{
		{Space: "count/3", Key: []byte("storm"), Value: []byte("2")},
		{Space: "count/3", Key: []byte("bolt"), Value: []byte("5")},
		{Space: "source/0", Key: []byte("offset"), Value: []byte("42")},
	}})
	if err != nil {
		log.Fatal(err)
	}
	// A late writer of checkpoint 1 changes nothing.
	err = s.Commit(ctx, state.Checkpoint{ID: 1, Changes: []state.Change{
		{Space: "count/3", Key: []byte("bolt"), Delete: true},
	}})
	fmt.Println(errors.Is(err, state.ErrStale))

	id, err := s.Committed(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed:", id)
	err = s.Scan(ctx, "count/3", func(key, value []byte) error {
		fmt.Printf("%s=%s\n", key, value)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// true
	// committed: 1
	// bolt=5
	// storm=2
}

package redis_test

import (
	"context"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/goshelter/goshelter/state"
	sredis "github.com/goshelter/goshelter/state/redis"
)

func Example() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	// The prefix names the topology; its incarnations share it.
	s := sredis.New(client, "wordcount")
	defer s.Close()

	ctx := context.Background()
	err := s.Commit(ctx, state.Checkpoint{ID: 1, Changes: []state.Change{
		{Space: "count/0", Key: []byte("storm"), Value: []byte("2")},
	}})
	if err != nil {
		log.Fatal(err)
	}
}

package redis_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/internal/testsupport/statecrash"
	"github.com/redis/go-redis/v9"

	sredis "github.com/goshelter/goshelter/state/redis"
)

// crashAddrEnv names the Redis address of a crash child.
const crashAddrEnv = "GOSHELTER_STATECRASH_REDIS"

// crashLines is enough input that a child paced at 50 µs a line is still
// counting at each of the 20 kills.
const crashLines = 30000

// crashChild is the test binary as the crash test's child: it counts on the
// Redis at crashAddrEnv and returns its exit code.
func crashChild(lines string) int {
	n, err := strconv.Atoi(lines)
	if err == nil {
		client := redis.NewClient(&redis.Options{Addr: os.Getenv(crashAddrEnv)})
		err = statecrash.Child(context.Background(), sredis.New(client, "crash"), n, os.Stdout)
		if closeErr := client.Close(); err == nil {
			err = closeErr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "statecrash child:", err)
		return 1
	}
	return 0
}

// TestStatefulBoltsSurviveSIGKILL is issue 23's proof on Redis: a stateful
// word count killed with SIGKILL at 20 random moments, started again each
// time, ends with every count exact.
func TestStatefulBoltsSurviveSIGKILL(t *testing.T) {
	srv := startServer(t, "--appendonly", "yes", "--appendfsync", "always", "--dir", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(3*time.Minute))
	defer cancel()
	figures, err := statecrash.Prove(ctx, crashLines, 20, uint64(time.Now().UnixNano()),
		func() *exec.Cmd { return statecrash.Command(crashLines, crashAddrEnv+"="+srv.addr) },
		func(ctx context.Context) (map[string]int, error) {
			return statecrash.Counts(ctx, sredis.New(srv.client(t), "crash"))
		})
	if err != nil {
		t.Fatalf("%v (%v)", err, figures)
	}
	t.Logf("SIGKILL figures (Redis): %v", figures)
	fmt.Println("SIGKILL figures (Redis):", figures)
	if figures.Kills != 20 || figures.Lost != 0 || figures.Doubled != 0 {
		t.Errorf("want 20 kills, 0 lost, 0 double counted: %v", figures)
	}
}

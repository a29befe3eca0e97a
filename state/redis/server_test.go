package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goshelter/goshelter/internal/testsupport"
)

// server is a redis-server process of a test's own.
type server struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd.Wait returned
}

// startServer starts redis-server on a free loopback port with args added
// to its command line, and returns once it answers PING. The server is
// killed when the test ends, if it was not before. The test skips when
// redis-server is not installed.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skipf("redis-server not installed: %v (apt-get install redis-server)", err)
	}
	// Another process may take the free port before the server binds it;
	// then the server exits, and a new port is worth a try.
	var last error
	for range 3 {
		s, err := tryStart(t, bin, args)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatal(last)
	return nil
}

func tryStart(t *testing.T, bin string, args []string) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return startOn(t, bin, port, args)
}

// restartEmpty kills s and starts a new server on its port with nothing in
// it, as a Redis without persistence comes back after a crash.
func (s *server) restartEmpty(t *testing.T) *server {
	t.Helper()
	s.kill()
	_, port, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(port)
	srv, err := startOn(t, s.cmd.Path, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func startOn(t *testing.T, bin string, port int, args []string) (*server, error) {
	s := &server{addr: "127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning",
	}, args...)...)
	out := &lockedBuffer{}
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.kill)

	client := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer client.Close()
	deadline := time.Now().Add(testsupport.Scaled(10 * time.Second))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server on %s exited: %s", s.addr, out.String())
		case <-time.After(10 * time.Millisecond): // the poll's period
		}
		if time.Now().After(deadline) {
			s.kill()
			return nil, fmt.Errorf("redis-server on %s does not answer PING: %w\n%s", s.addr, err, out.String())
		}
	}
}

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

func (s *server) client(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	t.Cleanup(func() {
		if err := c.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
			t.Errorf("close client: %v", err)
		}
	})
	return c
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// runBroker is "exactlyonce broker": kfake on -addr, persisting to -data,
// until SIGTERM or an interrupt, then a clean close (which saves its state).
func runBroker(args []string) error {
	fs := flag.NewFlagSet("broker", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:39092", "address to listen on")
	data := fs.String("data", "exactlyonce-data/broker", "directory of the broker's data")
	_ = fs.Parse(args)
	_, portText, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("broker address %q: %w", *addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("broker address %q: %w", *addr, err)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(*data), kfake.SyncWrites(),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, *addr) }))
	if err != nil {
		return fmt.Errorf("starting the broker on %s: %w", *addr, err)
	}
	if err := os.WriteFile(filepath.Join(*data, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		c.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	c.Close()
	return os.Remove(filepath.Join(*data, "pid"))
}

// ensureLocalBroker starts the local broker in a process of its own unless
// one answers on addr already, and waits until it answers.
func ensureLocalBroker(ctx context.Context, addr, dir string) error {
	if answers(addr) {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	data := filepath.Join(dir, "broker")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "broker.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(self, "broker", "-addr", addr, "-data", data)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A session of its own: the sample's SIGKILL or a terminal's ^C does
	// not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the local broker: %w", err)
	}
	fmt.Printf("started a local broker on %s (pid %d, data in %s; stop it with -stop-broker)\n", addr, cmd.Process.Pid, data)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it fails at once; the process outlives this one otherwise
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !answers(addr) {
		select {
		case err := <-exited:
			return fmt.Errorf("the local broker exited (see %s): %v", logFile.Name(), err)
		case <-ctx.Done():
			return fmt.Errorf("the local broker does not answer on %s: %w", addr, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// answers reports whether something accepts connections on addr.
func answers(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// stopLocalBroker stops the local broker of dir and waits until it exited.
func stopLocalBroker(dir string) error {
	pidFile := filepath.Join(dir, "broker", "pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Println("no local broker runs for", dir)
		return nil
	} else if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("pid file %s: %w", pidFile, err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping the local broker (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("the local broker (pid %d) did not stop within 30 s", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling another process's exit: there is nothing to wait on
	}
	fmt.Println("stopped the local broker", pid)
	return nil
}

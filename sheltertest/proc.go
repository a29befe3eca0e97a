package sheltertest

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The fd and child-process checks of Start read /proc (Linux); where it is
// absent they return nil and Start skips them.

// warmUpPoller makes the Go runtime open the fds it opens once per process
// (the poller's epoll and eventfd, on the first pipe or socket), so that a
// topology that is the process's first user of them does not seem to leak
// them.
func warmUpPoller() {
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
}

// openFDs returns this process's open fds as "fd -> target" (a path,
// "pipe:[123]", "socket:[456]", ...), or nil without /proc.
func openFDs() map[string]bool {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	fds := make(map[string]bool, len(entries))
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil { // closed since: the directory's own fd, for one
			continue
		}
		fds[e.Name()+" -> "+target] = true
	}
	return fds
}

// newFDs describes the fds open now that were not in before, by fd number.
func newFDs(before map[string]bool) []string {
	if before == nil {
		return nil
	}
	var fresh []string
	for fd := range openFDs() {
		if !before[fd] {
			fresh = append(fresh, fd)
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fdNumber(fresh[i]) < fdNumber(fresh[j]) })
	return fresh
}

func fdNumber(fd string) int {
	n, _ := strconv.Atoi(fd[:strings.IndexByte(fd, ' ')])
	return n
}

// childProcesses returns this process's children by pid, each described as
// "pid 123 (sleep, state S)", or nil without /proc. A zombie (state Z) counts:
// it is a child nobody waited for.
func childProcesses() map[int]string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil // not a procfs
	}
	self := os.Getpid()
	children := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil { // gone since the listing
			continue
		}
		if comm, state, ppid, ok := parseStat(stat); ok && ppid == self {
			children[pid] = fmt.Sprintf("pid %d (%s, state %s)", pid, comm, state)
		}
	}
	return children
}

// parseStat reads the command, state and parent pid of /proc/<pid>/stat:
// "pid (comm) state ppid ...". The command may hold spaces and parentheses,
// so it ends at the last ')'.
func parseStat(stat []byte) (comm, state string, ppid int, ok bool) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", "", 0, false
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 2 {
		return "", "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return "", "", 0, false
	}
	return string(stat[open+1 : end]), fields[0], ppid, true
}

// newChildren describes the children now that were not in before, by pid.
func newChildren(before map[int]string) []string {
	if before == nil {
		return nil
	}
	now := childProcesses()
	pids := make([]int, 0, len(now))
	for pid := range now {
		if _, ok := before[pid]; !ok {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	fresh := make([]string, len(pids))
	for i, pid := range pids {
		fresh[i] = now[pid]
	}
	return fresh
}

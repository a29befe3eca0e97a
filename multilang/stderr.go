package multilang

import (
	"bufio"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Limits on logging a child's stderr.
const (
	stderrLinesPerSecond = 100     // lines logged per second; the rest are counted
	stderrTailBytes      = 1 << 10 // stderr kept for a child failure error
	stderrMaxLine        = 8 << 10 // longer lines are cut
)

// readStderr reads the child's stderr on its own goroutine, from the start, so
// a child that writes a lot there never blocks; lines are logged at warn level,
// at most stderrLinesPerSecond a second.
func (c *child) readStderr() {
	defer close(c.stderrDone)
	defer c.stderr.Close() // at once, as read does for stdout
	r := bufio.NewReaderSize(c.stderr, 64<<10)
	lim := lineLimiter{logger: c.cfg.log}
	defer lim.flush()
	for {
		line, err := readLine(r)
		if len(line) > 0 || err == nil {
			c.tail.add(line)
			lim.line(line)
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, cut at stderrMaxLine bytes (the rest is skipped).
func readLine(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		part, isPrefix, err := r.ReadLine()
		if b.Len() < stderrMaxLine {
			b.Write(part[:min(len(part), stderrMaxLine-b.Len())])
		}
		if err != nil || !isPrefix {
			return b.String(), err
		}
	}
}

// lineLimiter logs lines up to a rate and counts the others.
type lineLimiter struct {
	logger     *zap.Logger
	window     time.Time
	logged     int
	suppressed int
}

func (l *lineLimiter) line(line string) {
	now := time.Now()
	if now.Sub(l.window) >= time.Second {
		l.flush()
		l.window, l.logged = now, 0
	}
	if l.logged < stderrLinesPerSecond {
		l.logged++
		l.logger.Warn("child stderr", zap.String("line", line))
		return
	}
	l.suppressed++
}

func (l *lineLimiter) flush() {
	if l.suppressed > 0 {
		l.logger.Warn("child stderr lines not logged (rate limit)", zap.Int("lines", l.suppressed))
		l.suppressed = 0
	}
}

// stderrTail keeps the end of the child's stderr.
type stderrTail struct {
	mu  sync.Mutex // mu guards buf
	buf []byte
}

func (t *stderrTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, line...)
	t.buf = append(t.buf, '\n')
	if over := len(t.buf) - stderrTailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimRight(string(t.buf), "\n")
}

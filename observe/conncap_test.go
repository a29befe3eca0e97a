package observe

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/goshelter/goshelter/internal/testsupport"
)

func TestTheDefaultLimitsCloseAnIdleConnectionWithin30s(t *testing.T) {
	if d := defaultLimits.idle; d <= 0 || d > 30*time.Second {
		t.Errorf("idle timeout %v: an idle connection must be closed within 30 s of its last answer", d)
	}
	if d := defaultLimits.readHeader; d <= 0 || d > 30*time.Second {
		t.Errorf("read header timeout %v: a client that never finishes its headers must be cut off", d)
	}
	if defaultLimits.maxConns <= 0 {
		t.Errorf("no connection cap: %d", defaultLimits.maxConns)
	}
}

// keptAlive is a client connection that has made one request and keeps the
// connection open.
type keptAlive struct {
	net.Conn
	rd *bufio.Reader
}

func dialKeptAlive(t *testing.T, addr string) *keptAlive {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a hung server fails the test instead of hanging it
	k := &keptAlive{Conn: c, rd: bufio.NewReader(c)}
	if err := k.request(); err != nil {
		t.Fatal(err)
	}
	return k
}

// request asks for / on the kept connection and reads the whole answer.
func (k *keptAlive) request() error {
	if _, err := io.WriteString(k, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(k.rd, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Close {
		return &net.OpError{Op: "request", Err: io.ErrUnexpectedEOF} // not a 200 kept alive
	}
	return nil
}

// closedByServer reports whether the server hung up the connection; it waits
// for the server to do something.
func (k *keptAlive) closedByServer() bool {
	_, err := k.rd.ReadByte()
	return err == io.EOF
}

var answerOK = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })

// With fewer connections than the cap, only the idle timeout closes them.
func TestAnIdleConnectionIsClosedAfterTheIdleTimeout(t *testing.T) {
	lim := defaultLimits
	lim.idle = 20 * time.Millisecond
	srv, err := listen("127.0.0.1:0", answerOK, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for i := range 5 {
		start := time.Now()
		if k := dialKeptAlive(t, srv.Addr); !k.closedByServer() {
			t.Fatalf("client %d: the idle connection was not closed", i)
		}
		if waited := time.Since(start); waited < lim.idle {
			t.Errorf("client %d: closed after %v, before the idle timeout %v", i, waited, lim.idle)
		}
	}
}

// At the cap, a new client takes the place of the connection idle the
// longest; the others stay open and usable.
func TestANewClientTakesThePlaceOfTheLongestIdle(t *testing.T) {
	lim := defaultLimits
	lim.maxConns = 3
	srv, capped, err := listenCapped("127.0.0.1:0", answerOK, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// A client reads its answer before the server marks the connection idle,
	// so each is awaited: the idle order is the order of the dials.
	var first, second, third *keptAlive
	for _, k := range []**keptAlive{&first, &second, &third} {
		*k = dialKeptAlive(t, srv.Addr)
		awaitLastIdle(t, capped, *k)
	}
	if err := first.request(); err != nil { // first is now idle more recently than second
		t.Fatal(err)
	}
	// The idle count is 3 before the server even sees first's request: wait
	// for first to be the most recently idle, or a loaded machine closes it.
	awaitLastIdle(t, capped, first)
	fourth := dialKeptAlive(t, srv.Addr) // answered, though three connections are open
	if !second.closedByServer() {
		t.Error("the longest idle connection was not closed to make room")
	}
	for name, k := range map[string]*keptAlive{"first": first, "third": third, "fourth": fourth} {
		if err := k.request(); err != nil {
			t.Errorf("the %s connection was closed though another was idle longer: %v", name, err)
		}
	}
}

// awaitLastIdle waits until k's connection is the one that went idle last.
func awaitLastIdle(t *testing.T, capped *connCap, k *keptAlive) {
	t.Helper()
	last := func() bool {
		capped.mu.Lock()
		defer capped.mu.Unlock()
		e := capped.idle.Back()
		return e != nil && e.Value.(*cappedConn).RemoteAddr().String() == k.LocalAddr().String()
	}
	testsupport.WaitUntil(t, 10*time.Second, "the connection to go idle again", last)
}

// A connection busy with a request is never closed to make room: a newcomer
// waits for it.
func TestABusyConnectionIsNotClosedToMakeRoom(t *testing.T) {
	entered, release := make(chan struct{}, 2), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	var conns connCounter
	lim := defaultLimits
	lim.maxConns, lim.wrap = 1, conns.wrap
	srv, err := listen("127.0.0.1:0", slow, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	busy, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_ = busy.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-entered
	newcomer := dialAndAsk(t, srv.Addr)
	// Once accepted, the newcomer waits for a slot; a cap that took it from
	// the busy connection would close that now.
	testsupport.WaitUntil(t, 10*time.Second, "the newcomer to be accepted", func() bool { return conns.most.Load() >= 2 })
	close(release)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the busy connection lost its answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "ok" {
		t.Fatalf("the busy connection's answer: %q, %v", body, err)
	}
	// Idle now, the busy connection makes room for the newcomer.
	resp, err = http.ReadResponse(bufio.NewReader(newcomer), nil)
	if err != nil {
		t.Fatalf("the waiting client: %v", err)
	}
	resp.Body.Close()
}

// dialAndAsk connects and sends a request without reading the answer.
func dialAndAsk(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// Close stops an Accept waiting for a slot (or for a connection, when Close
// comes first).
func TestClosingTheListenerStopsAWaitingAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	capped := newConnCap(ln, 1)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	held, err := capped.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	newcomer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer newcomer.Close()
	done := make(chan error, 1)
	go func() { _, err := capped.Accept(); done <- err }()
	_ = capped.Close()
	if err := <-done; err == nil {
		t.Error("Accept returned a connection after Close with no slot free")
	}
}

package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goshelter/goshelter/internal/testsupport"
)

// natsServer is an embedded nats-server with JetStream in memory and a
// connection to it, for the package's own tests: real messages, real acks.
type natsServer struct {
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
}

// startServer starts a server and connects to it; both end with the test.
func startServer(t *testing.T) *natsServer {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(testsupport.Scaled(10 * time.Second)) {
		t.Fatal("nats-server not ready")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &natsServer{url: srv.ClientURL(), nc: nc, js: js}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testsupport.Scaled(10*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// stream creates stream on subject "<lower name>.>" with n messages "m<i>"
// (i from 1) on "<lower name>.a", and returns it.
func (s *natsServer) stream(t *testing.T, name, subject string, n int, cfg ...func(*jetstream.StreamConfig)) jetstream.Stream {
	t.Helper()
	sc := jetstream.StreamConfig{Name: name, Subjects: []string{subject + ".>"}, Storage: jetstream.MemoryStorage}
	for _, f := range cfg {
		f(&sc)
	}
	st, err := s.js.CreateStream(ctxFor(t), sc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := s.js.Publish(ctxFor(t), subject+".a", []byte(fmt.Sprintf("m%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// consumer creates an explicit-ack pull consumer on stream, AckWait an hour
// unless cfg says otherwise.
func (s *natsServer) consumer(t *testing.T, stream, name string, cfg ...func(*jetstream.ConsumerConfig)) jetstream.Consumer {
	t.Helper()
	cc := jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour}
	for _, f := range cfg {
		f(&cc)
	}
	c, err := s.js.CreateOrUpdateConsumer(ctxFor(t), stream, cc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetch takes n messages from c, waiting for all of them.
func fetch(t *testing.T, c jetstream.Consumer, n int) []jetstream.Msg {
	t.Helper()
	batch, err := c.Fetch(n, jetstream.FetchMaxWait(testsupport.Scaled(5*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range batch.Messages() {
		out = append(out, m)
	}
	if len(out) != n {
		t.Fatalf("fetched %d messages, want %d (%v)", len(out), n, batch.Error())
	}
	return out
}

// info reads c's state on the server; the acks and naks the tests send are
// flushed first.
func (s *natsServer) info(t *testing.T, c jetstream.Consumer) *jetstream.ConsumerInfo {
	t.Helper()
	if err := s.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	i, err := c.Info(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	return i
}

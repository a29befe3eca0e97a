package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/goshelter/goshelter/internal/testsupport"
	"github.com/goshelter/goshelter/supervision"
)

func TestJetStream(t *testing.T) {
	if os.Getenv(roleEnv) != "" {
		t.Skip("a helper process runs TestHelperProcess only")
	}
	RegisterFailHandler(Fail)
	// The mutation run stops at the first failing spec (testsupport.FailFast).
	suite, reporter := GinkgoConfiguration()
	suite.FailFast = suite.FailFast || testsupport.FailFast()
	RunSpecs(t, "jetstream connector specs", suite, reporter)
}

// baseline ignores the goroutines that exist before the first spec.
var baseline goleak.Option

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(scaled(20 * time.Second))
	SetDefaultEventuallyPollingInterval(5 * time.Millisecond)
	baseline = goleak.IgnoreCurrent()
})

// Every spec ends with a leak check, registered first so it runs last: after
// the spec's topology stopped and its broker shut down.
var _ = BeforeEach(func() {
	DeferCleanup(func() {
		Expect(goleak.Find(baseline)).To(Succeed(), "a goroutine outlived the spec")
	})
})

// scaled stretches d by GOSHELTER_TEST_TIMEOUT_SCALE, the one variable of
// every goshelter suite.
func scaled(d time.Duration) time.Duration { return testsupport.Scaled(d) }

// broker is a real nats-server with JetStream on file storage, embedded in
// the test process.
type broker struct {
	srv  *server.Server
	dir  string
	port int
	URL  string
}

// startBroker starts a server storing in dir, on port (-1: a random one).
func startBroker(dir string, port int) (*broker, error) {
	opts := &server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true, ServerName: "specs",
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(scaled(10 * time.Second)) {
		srv.Shutdown()
		return nil, fmt.Errorf("nats-server on port %d not ready", port)
	}
	p := srv.Addr().(*net.TCPAddr).Port
	return &broker{srv: srv, dir: dir, port: p, URL: fmt.Sprintf("nats://127.0.0.1:%d", p)}, nil
}

// newBroker starts a broker for the spec, shut down when it ends.
func newBroker() *broker {
	GinkgoHelper()
	b, err := startBroker(GinkgoT().TempDir(), -1)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(b.stop)
	return b
}

func (b *broker) stop() {
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		b.srv = nil
	}
}

// restart stops the server and starts a new one on the same port and store.
func (b *broker) restart() {
	GinkgoHelper()
	b.stop()
	var err error
	Eventually(func() error {
		var nb *broker
		nb, err = startBroker(b.dir, b.port)
		if err == nil {
			b.srv = nb.srv
		}
		return err
	}).Should(Succeed())
}

// client is a test-side connection with JetStream helpers.
type client struct {
	nc *nats.Conn
	js js.JetStream
}

func connect(url string) *client {
	GinkgoHelper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.RetryOnFailedConnect(true))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(nc.Close)
	j, err := js.New(nc)
	Expect(err).NotTo(HaveOccurred())
	return &client{nc, j}
}

func ctxT() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), scaled(10*time.Second))
}

// stream creates a file stream on subjects.
func (c *client) stream(name string, subjects ...string) {
	GinkgoHelper()
	ctx, cancel := ctxT()
	defer cancel()
	_, err := c.js.CreateStream(ctx, js.StreamConfig{Name: name, Subjects: subjects, Storage: js.FileStorage, Duplicates: 10 * time.Minute})
	Expect(err).NotTo(HaveOccurred())
}

// ready waits until the client's connection answers requests. After a
// restart of the server, a request the client writes before it noticed that
// its connection died is lost, and its caller would wait for an answer that
// never comes: a short request, retried, finds the new connection first.
func (c *client) ready() {
	GinkgoHelper()
	Eventually(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Second))
		defer cancel()
		_, err := c.js.AccountInfo(ctx)
		return err
	}).Should(Succeed(), "the client reaches the server")
}

// publish stores n records "r<i>" (i from 1) on subject, each with a header.
func (c *client) publish(subject string, n int) {
	GinkgoHelper()
	c.ready()
	ctx, cancel := ctxT()
	defer cancel()
	for i := 1; i <= n; i++ {
		m := &nats.Msg{Subject: subject, Data: []byte(fmt.Sprintf("r%d", i)), Header: nats.Header{"N": []string{strconv.Itoa(i)}}}
		_, err := c.js.PublishMsg(ctx, m)
		Expect(err).NotTo(HaveOccurred())
	}
}

// count is the number of messages stream holds: 0 while it does not exist.
// Any other error is returned, not read as 0: Expect fails on it, and
// Eventually(c.count).WithArguments(stream) asks again (a restarted server).
func (c *client) count(stream string) (uint64, error) {
	ctx, cancel := ctxT()
	defer cancel()
	s, err := c.js.Stream(ctx, stream)
	if errors.Is(err, js.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// consumerInfo reads a consumer's state.
func (c *client) consumerInfo(stream, durable string) *js.ConsumerInfo {
	GinkgoHelper()
	ctx, cancel := ctxT()
	defer cancel()
	cons, err := c.js.Consumer(ctx, stream, durable)
	Expect(err).NotTo(HaveOccurred())
	info, err := cons.Info(ctx)
	Expect(err).NotTo(HaveOccurred())
	return info
}

// readAll returns the data of every message in stream, in order.
func (c *client) readAll(stream string) []string {
	GinkgoHelper()
	ctx, cancel := ctxT()
	defer cancel()
	s, err := c.js.Stream(ctx, stream)
	Expect(err).NotTo(HaveOccurred())
	info, err := s.Info(ctx)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted
		}
		out = append(out, string(m.Data))
	}
	return out
}

// run starts topo with restarts after a short back-off, logging warnings.
func runOpts() []supervision.Option {
	logger := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(GinkgoWriter), zapcore.WarnLevel))
	return []supervision.Option{
		supervision.WithLogger(logger),
		supervision.WithRestarts(supervision.Restarts{Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Max: 50, StablePeriod: time.Second}),
		supervision.WithDrainTimeout(2 * time.Second),
	}
}

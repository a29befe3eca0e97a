package jetstream

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The documented defaults: JetStream's AckWait, the back-off of
// WithNackBackoff, no delivery bound, the buffer, the publish timeout, the
// kept bytes and the duplicate window.
func TestConfigDefaults(t *testing.T) {
	c := newConfig(nil)
	for _, d := range []struct {
		name      string
		got, want any
	}{
		{"ackWait", c.ackWait, 30 * time.Second},
		{"nackBase", c.nackBase, 500 * time.Millisecond},
		{"nackMax", c.nackMax, 30 * time.Second},
		{"maxDeliver", c.maxDeliver, -1},
		{"buffer", c.buffer, 512},
		{"pubTimeout", c.pubTimeout, 5 * time.Second},
		{"keptMax", c.keptMax, 8 << 20},
		{"dupWindow", c.dupWindow, time.Minute},
		{"err", c.err, error(nil)},
	} {
		if d.got != d.want {
			t.Errorf("default %s = %v, want %v", d.name, d.got, d.want)
		}
	}
}

// Each option accepts the ends of its range, applies them, and refuses the
// values just outside with an error naming the option.
func TestOptionBounds(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		opt   Option
		bad   string // the option's name in the error; "" when accepted
		check func(config) bool
	}{
		{"ack wait 30ms", WithAckWait(30 * ms), "", func(c config) bool { return c.ackWait == 30*ms }},
		{"ack wait under 30ms", WithAckWait(30*ms - 1), "WithAckWait", nil},
		{"back-off 1ns..1ns", WithNackBackoff(1, 1), "", func(c config) bool { return c.nackBase == 1 && c.nackMax == 1 }},
		{"back-off 2ms..7ms", WithNackBackoff(2*ms, 7*ms), "", func(c config) bool { return c.nackBase == 2*ms && c.nackMax == 7*ms }},
		{"back-off base 0", WithNackBackoff(0, ms), "WithNackBackoff", nil},
		{"back-off max under base", WithNackBackoff(2*ms, 2*ms-1), "WithNackBackoff", nil},
		{"max deliver 1", WithMaxDeliver(1), "", func(c config) bool { return c.maxDeliver == 1 }},
		{"max deliver -1", WithMaxDeliver(-1), "", func(c config) bool { return c.maxDeliver == -1 }},
		{"max deliver 0", WithMaxDeliver(0), "WithMaxDeliver", nil},
		{"max deliver -2", WithMaxDeliver(-2), "WithMaxDeliver", nil},
		{"buffer 1", WithBuffer(1), "", func(c config) bool { return c.buffer == 1 }},
		{"buffer 65536", WithBuffer(1 << 16), "", func(c config) bool { return c.buffer == 1<<16 }},
		{"buffer 0", WithBuffer(0), "WithBuffer", nil},
		{"buffer 65537", WithBuffer(1<<16 + 1), "WithBuffer", nil},
		{"publish timeout 1ns", WithPublishTimeout(1), "", func(c config) bool { return c.pubTimeout == 1 }},
		{"publish timeout 0", WithPublishTimeout(0), "WithPublishTimeout", nil},
		{"kept bytes 1024", WithKeptBytes(1 << 10), "", func(c config) bool { return c.keptMax == 1<<10 }},
		{"kept bytes 1023", WithKeptBytes(1<<10 - 1), "WithKeptBytes", nil},
		{"duplicate window 100ms", WithDuplicateWindow(100 * ms), "", func(c config) bool { return c.dupWindow == 100*ms }},
		{"duplicate window under 100ms", WithDuplicateWindow(100*ms - 1), "WithDuplicateWindow", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := newConfig([]Option{c.opt})
			if c.bad == "" {
				if got.err != nil {
					t.Fatalf("refused: %v", got.err)
				}
				if !c.check(got) {
					t.Fatalf("not applied: %+v", got)
				}
				return
			}
			if got.err == nil || !strings.HasPrefix(got.err.Error(), "jetstream: "+c.bad+"(") {
				t.Fatalf("err = %v, want one starting %q", got.err, "jetstream: "+c.bad+"(")
			}
			if def := newConfig(nil); got.ackWait != def.ackWait || got.nackBase != def.nackBase || got.maxDeliver != def.maxDeliver ||
				got.buffer != def.buffer || got.pubTimeout != def.pubTimeout || got.keptMax != def.keptMax || got.dupWindow != def.dupWindow {
				t.Fatalf("a refused value was applied: %+v", got)
			}
		})
	}
}

// The tasks fail with the first bad option, not the last.
func TestConfigKeepsTheFirstBadOption(t *testing.T) {
	c := newConfig([]Option{WithBuffer(1), WithBuffer(0), WithKeptBytes(1)})
	if c.err == nil || !strings.Contains(c.err.Error(), "WithBuffer(0)") {
		t.Fatalf("err = %v, want the WithBuffer(0) one", c.err)
	}
}

// A task's connection is named, retries its first connect and reconnects
// forever every 100 ms, unless the user's options say otherwise; an option
// that fails is an error naming the URL.
func TestConnectOptions(t *testing.T) {
	c := newConfig(nil)
	nc, err := c.connect("nats://127.0.0.1:1", "task name")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if o := nc.Opts; o.Name != "task name" || !o.RetryOnFailedConnect || o.MaxReconnect != -1 || o.ReconnectWait != 100*time.Millisecond {
		t.Fatalf("options: name %q, retry %v, max reconnects %d, reconnect wait %v", o.Name, o.RetryOnFailedConnect, o.MaxReconnect, o.ReconnectWait)
	}
	c = newConfig([]Option{WithNATSOptions(nats.MaxReconnects(3), nats.ReconnectWait(time.Second))})
	nc2, err := c.connect("nats://127.0.0.1:1", "user")
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	if o := nc2.Opts; o.MaxReconnect != 3 || o.ReconnectWait != time.Second {
		t.Fatalf("the user's options lost: max reconnects %d, reconnect wait %v", o.MaxReconnect, o.ReconnectWait)
	}
	c = newConfig([]Option{WithNATSOptions(nats.RootCAs(t.TempDir() + "/none.pem"))})
	if nc3, err := c.connect("nats://127.0.0.1:1", "bad"); err == nil || !strings.Contains(err.Error(), `jetstream: connecting to "nats://127.0.0.1:1"`) {
		if nc3 != nil {
			nc3.Close()
		}
		t.Fatalf("connect with a missing CA file: err = %v", err)
	}
}

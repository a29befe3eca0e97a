package kafka

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Storm's KafkaSpoutConfig defaults, as documented on the options.
func TestDefaults(t *testing.T) {
	c := defaults()
	want := backoff{initial: 0, period: 2 * time.Millisecond, max: 10 * time.Second, retries: math.MaxInt}
	if c.guarantee != AtLeastOnce || c.firstPoll != UncommittedEarliest || c.maxUncommitted != 10_000_000 ||
		c.commitPeriod != 30*time.Second || c.maxPoll != 500 || c.retry != want || c.closeTimeout != 5*time.Second ||
		c.discovery != 10*time.Second || c.share != (share{0, 1}) {
		t.Errorf("defaults() = %+v", c)
	}
	if err := c.validate("x"); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// Every option check, at its bound: the last valid value passes, the first
// invalid one fails naming the setting.
func TestValidateBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
		says string // "" when valid
	}{
		{"guarantee below", WithGuarantee(AtLeastOnce - 1), "unknown guarantee Guarantee(-1)"},
		{"guarantee first", WithGuarantee(AtLeastOnce), ""},
		{"guarantee last", WithGuarantee(NoGuarantee), ""},
		{"guarantee above", WithGuarantee(NoGuarantee + 1), "unknown guarantee Guarantee(3)"},
		{"first poll below", WithFirstPoll(UncommittedEarliest - 1), "unknown first-poll strategy FirstPoll(-1)"},
		{"first poll first", WithFirstPoll(UncommittedEarliest), ""},
		{"first poll last", WithFirstPoll(Latest), ""},
		{"first poll above", WithFirstPoll(Latest + 1), "unknown first-poll strategy FirstPoll(4)"},
		{"max uncommitted 1", WithMaxUncommitted(1), ""},
		{"max uncommitted 0", WithMaxUncommitted(0), "max uncommitted offsets 0 is not positive"},
		{"commit period 1ns", WithCommitPeriod(1), ""},
		{"commit period 0", WithCommitPeriod(0), "commit period 0s is not positive"},
		{"max poll 1", WithMaxPollRecords(1), ""},
		{"max poll 0", WithMaxPollRecords(0), "max poll records 0 is not positive"},
		{"retry zeros", WithRetry(0, 0, 0, 0), ""},
		{"retry initial", WithRetry(-1, 0, 0, 0), "have a negative value"},
		{"retry period", WithRetry(0, -1, 0, 0), "have a negative value"},
		{"retry max", WithRetry(0, 0, -1, 0), "have a negative value"},
		{"retry retries", WithRetry(0, 0, 0, -1), "have a negative value"},
		{"discovery 1ns", WithPartitionDiscovery(1), ""},
		{"discovery 0", WithPartitionDiscovery(0), "partition discovery period 0s is not positive"},
		{"share 0 of 1", WithProcessShare(0, 1), ""},
		{"share 1 of 2", WithProcessShare(1, 2), ""},
		{"share 0 of 0", WithProcessShare(0, 0), "process share 0 of 0"},
		{"share -1 of 2", WithProcessShare(-1, 2), "process share -1 of 2"},
		{"share 2 of 2", WithProcessShare(2, 2), "process share 2 of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaults()
			tc.opt(&c)
			err := c.validate("spout of group \"g\"")
			switch {
			case tc.says == "" && err != nil:
				t.Errorf("validate = %v, want nil", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says) || !strings.HasPrefix(err.Error(), `kafka: spout of group "g": `)):
				t.Errorf("validate = %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

func TestCheckSpoutArguments(t *testing.T) {
	c := defaults()
	for _, tc := range []struct {
		translate bool
		seeds     []string
		group     string
		topics    []string
		says      string
	}{
		{true, []string{"s"}, "g", []string{"t"}, ""},
		{false, []string{"s"}, "g", []string{"t"}, "kafka: spout: the translate function is nil"},
		{true, nil, "g", []string{"t"}, "kafka: spout: no seed broker"},
		{true, []string{"s"}, "", []string{"t"}, "kafka: spout: empty consumer group"},
		{true, []string{"s"}, "g", nil, `kafka: spout of group "g": no topic`},
	} {
		err := checkSpout(tc.translate, tc.seeds, tc.group, tc.topics, &c)
		if got := errText(err); got != tc.says {
			t.Errorf("checkSpout(%v, %v, %q, %v) = %q, want %q", tc.translate, tc.seeds, tc.group, tc.topics, got, tc.says)
		}
	}
	bad := defaults()
	WithMaxPollRecords(0)(&bad)
	if err := checkSpout(true, []string{"s"}, "g", []string{"t"}, &bad); err == nil || !strings.Contains(err.Error(), `spout of group "g": max poll`) {
		t.Errorf("checkSpout with a bad option = %v, want the option's error", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// SpoutOf and Sink panic with the culprit's error.
func TestConstructorsPanicOnBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		says string
	}{
		{"spout, no seed", func() { Spout(nil, "g", []string{"t"}) }, "kafka: spout: no seed broker"},
		{"spout, bad option", func() { Spout([]string{"s"}, "g", []string{"t"}, WithCommitPeriod(0)) }, "commit period 0s is not positive"},
		{"spoutOf, nil translate", func() { SpoutOf[Record](nil, []string{"s"}, "g", []string{"t"}) }, "the translate function is nil"},
		{"sink, no seed", func() { Sink(nil, func(r Record) Record { return r }) }, "kafka: sink: no seed broker"},
		{"sink, nil route", func() { Sink[Record]([]string{"s"}, nil) }, "kafka: sink: the route function is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				err, _ := recover().(error)
				if err == nil || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("panicked with %v, want an error saying %q", err, tc.says)
				}
			}()
			tc.f()
		})
	}
	Spout([]string{"s"}, "g", []string{"t"}) // valid: no panic
	Sink([]string{"s"}, func(r Record) Record { return r })
}

func TestStrings(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		AtLeastOnce: "AT_LEAST_ONCE", AtMostOnce: "AT_MOST_ONCE", NoGuarantee: "NO_GUARANTEE", Guarantee(7): "Guarantee(7)",
		UncommittedEarliest: "UNCOMMITTED_EARLIEST", UncommittedLatest: "UNCOMMITTED_LATEST", Earliest: "EARLIEST",
		Latest: "LATEST", FirstPoll(9): "FirstPoll(9)",
	} {
		if got := v.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// The retry schedule: the first wait is initial, then period doubling, capped.
func TestBackoffSchedule(t *testing.T) {
	b := backoff{initial: 3 * time.Millisecond, period: 10 * time.Millisecond, max: 70 * time.Millisecond}
	for fails, want := range map[int]time.Duration{
		0: 3 * time.Millisecond, 1: 3 * time.Millisecond, 2: 20 * time.Millisecond, 3: 40 * time.Millisecond,
		4: 70 * time.Millisecond, 5: 70 * time.Millisecond, 60: 70 * time.Millisecond,
	} {
		if got := b.delay(fails); got != want {
			t.Errorf("delay(%d) = %v, want %v", fails, got, want)
		}
	}
	capped := backoff{initial: time.Second, period: 10 * time.Millisecond, max: 40 * time.Millisecond}
	if got := capped.delay(1); got != 40*time.Millisecond {
		t.Errorf("delay(1) with initial over max = %v, want the max", got)
	}
	exact := backoff{period: 10 * time.Millisecond, max: 20 * time.Millisecond}
	if got := exact.delay(2); got != 20*time.Millisecond {
		t.Errorf("delay(2) reaching max exactly = %v, want 20ms", got)
	}
	if got := exact.delay(3); got != 20*time.Millisecond {
		t.Errorf("delay(3) past max = %v, want 20ms", got)
	}
	// At the cap the schedule stops doubling: a huge period doubled past it
	// would overflow.
	huge := backoff{period: 1 << 62, max: 1 << 62}
	if got := huge.delay(3); got != 1<<62 {
		t.Errorf("delay(3) with period and max 2^62ns = %v, want the max", got)
	}
}

func TestRecordHeadersBothWays(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_123)
	in := &kgo.Record{Topic: "t", Partition: 2, Offset: 9, Key: []byte("k"), Value: []byte("v"), Timestamp: ts,
		Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}}}
	r := fromKgo(in)
	if r.Topic != "t" || r.Partition != 2 || r.Offset != 9 || string(r.Key) != "k" || string(r.Value) != "v" || !r.Timestamp.Equal(ts) ||
		len(r.Headers) != 2 || r.Headers[0].Key != "a" || string(r.Headers[1].Value) != "2" {
		t.Errorf("fromKgo = %+v", r)
	}
	var out kgo.Record
	r.fill(&out)
	if out.Topic != "t" || string(out.Key) != "k" || string(out.Value) != "v" || !out.Timestamp.Equal(ts) ||
		len(out.Headers) != 2 || out.Headers[1].Key != "b" || string(out.Headers[0].Value) != "1" {
		t.Errorf("fill = %+v", out)
	}
	if r := fromKgo(&kgo.Record{Topic: "t"}); r.Headers != nil {
		t.Errorf("fromKgo of no headers = %v, want nil", r.Headers)
	}
	var none kgo.Record
	Record{Topic: "t"}.fill(&none)
	if none.Headers != nil {
		t.Errorf("fill of no headers = %v, want nil", none.Headers)
	}
}

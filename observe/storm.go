package observe

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/internal/stats"
	"github.com/goshelter/goshelter/supervision"
)

// The answers of Storm's UI REST API (docs/STORM-UI-REST-API.md in Apache
// Storm), with its field names, so that tools written for Storm's UI read a
// goshelter topology: /api/v1/topology/summary, /api/v1/topology/{id} and
// /api/v1/topology/{id}/component/{component}. A goshelter process runs one
// topology in one worker; the fields about clusters, workers and resources
// say so (one worker, no scheduler resources). Fields Storm's document does
// not have are goshelter's own, and Storm's tools ignore them.

// stormSummary answers /api/v1/topology/summary.
type stormSummary struct {
	Topologies               []stormTopologySummary `json:"topologies"`
	SchedulerDisplayResource bool                   `json:"schedulerDisplayResource"`
}

type stormTopologySummary struct {
	ID               string `json:"id"`
	EncodedID        string `json:"encodedId"`
	Name             string `json:"name"`
	Status           string `json:"status"`
	Uptime           string `json:"uptime"`
	UptimeSeconds    int64  `json:"uptimeSeconds"`
	TasksTotal       int    `json:"tasksTotal"`
	WorkersTotal     int    `json:"workersTotal"`
	ExecutorsTotal   int    `json:"executorsTotal"`
	ReplicationCount int    `json:"replicationCount"`
	// goshelter's own
	Incarnation int `json:"incarnation"`
	Restarts    int `json:"restarts"`
}

// stormTopology answers /api/v1/topology/{id}.
type stormTopology struct {
	stormTopologySummary
	MsgTimeout               int64              `json:"msgTimeout"`
	Window                   string             `json:"window"`
	WindowHint               string             `json:"windowHint"`
	Debug                    bool               `json:"debug"`
	SchedulerDisplayResource bool               `json:"schedulerDisplayResource"`
	TopologyStats            []stormWindowStats `json:"topologyStats"`
	Spouts                   []stormSpout       `json:"spouts"`
	Bolts                    []stormBolt        `json:"bolts"`
	// Configuration is every key the topology runs with, as Storm UI's
	// topology page lists it: see configuration.
	Configuration map[string]any `json:"configuration"`
	// goshelter's own
	InFlight int64        `json:"inFlight"`
	Events   []stormEvent `json:"events"` // oldest first
	// Stateful says the topology checkpoints (it has dsl.Stateful bolts), so
	// its spouts, bolts and executors have checkpoint figures to show.
	Stateful bool `json:"stateful"`
}

// stormWindowStats are a topology's figures over one window: emitted and
// transferred by every component, acked, failed and complete latency of the
// spouts' trees.
type stormWindowStats struct {
	WindowPretty    string `json:"windowPretty"` // the span the figures cover
	Window          string `json:"window"`
	Emitted         int64  `json:"emitted"`
	Transferred     int64  `json:"transferred"`
	CompleteLatency string `json:"completeLatency"` // ms
	Acked           int64  `json:"acked"`
	Failed          int64  `json:"failed"`
}

// stormLastError are the last-error fields of a spout or a bolt.
type stormLastError struct {
	LastError          string `json:"lastError"`
	ErrorHost          string `json:"errorHost"`
	ErrorPort          *int   `json:"errorPort"` // null: tasks have no port of their own
	ErrorWorkerLogLink string `json:"errorWorkerLogLink"`
	ErrorTime          *int64 `json:"errorTime"` // unix seconds, null without an error
	ErrorLapsedSecs    *int64 `json:"errorLapsedSecs"`
	ErrorTask          int    `json:"errorTask,omitempty"` // goshelter's own: the task that failed
}

// stormCheckpoint are goshelter's own fields on the last checkpoint committed
// in the current incarnation, for a component (the highest id, the longest
// time, the bytes of all its tasks) or an executor. They are there for every
// topology, 0 without state or before the first commit, so that a client
// reads one shape; stormTopology.Stateful says whether to expect more.
type stormCheckpoint struct {
	CheckpointID    int64  `json:"checkpointId"`
	CheckpointMs    string `json:"checkpointMs"` // from the checkpoint's start until the task passed its barrier
	CheckpointBytes int64  `json:"checkpointBytes"`
}

func checkpointOf(t supervision.TaskStats) stormCheckpoint {
	return stormCheckpoint{CheckpointID: t.Checkpoint, CheckpointMs: fmt.Sprintf("%.3f", ms(t.CheckpointDuration)), CheckpointBytes: t.CheckpointBytes}
}

type stormSpout struct {
	SpoutID         string `json:"spoutId"`
	EncodedSpoutID  string `json:"encodedSpoutId"`
	Executors       int    `json:"executors"`
	Tasks           int    `json:"tasks"`
	Emitted         int64  `json:"emitted"`
	Transferred     int64  `json:"transferred"`
	CompleteLatency string `json:"completeLatency"` // ms
	Acked           int64  `json:"acked"`
	Failed          int64  `json:"failed"`
	stormLastError
	// goshelter's own
	Pending int64 `json:"pending"`
	// OutsideCheckpoint says the spout is a reliable one declared
	// dsl.OutsideCheckpoint() in a topology with state: its messages are
	// at-least-once for the state, as its source is never rewound to a cut.
	OutsideCheckpoint bool `json:"outsideCheckpoint"`
	stormCheckpoint
}

type stormBolt struct {
	BoltID         string `json:"boltId"`
	EncodedBoltID  string `json:"encodedBoltId"`
	Executors      int    `json:"executors"`
	Tasks          int    `json:"tasks"`
	Emitted        int64  `json:"emitted"`
	Transferred    int64  `json:"transferred"`
	Capacity       string `json:"capacity"`
	ExecuteLatency string `json:"executeLatency"` // ms
	Executed       int64  `json:"executed"`
	ProcessLatency string `json:"processLatency"` // ms
	Acked          int64  `json:"acked"`
	Failed         int64  `json:"failed"`
	stormLastError
	// goshelter's own
	MailboxDepth int `json:"mailboxDepth"`
	stormCheckpoint
}

// stormEvent is a lifecycle event: the restart history.
type stormEvent struct {
	Time        time.Time `json:"time"`
	Kind        string    `json:"kind"` // started, failed, restarting, gave up, stopped
	Incarnation int       `json:"incarnation"`
	Attempt     int       `json:"attempt,omitempty"`
	DelaySecs   float64   `json:"delaySecs,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// stormComponent answers /api/v1/topology/{id}/component/{component}.
type stormComponent struct {
	ID                string              `json:"id"`
	EncodedID         string              `json:"encodedId"`
	Name              string              `json:"name"`
	TopologyID        string              `json:"topologyId"`
	EncodedTopologyID string              `json:"encodedTopologyId"`
	TopologyStatus    string              `json:"topologyStatus"`
	ComponentType     string              `json:"componentType"` // spout or bolt
	Executors         int                 `json:"executors"`
	Tasks             int                 `json:"tasks"`
	Window            string              `json:"window"`
	WindowHint        string              `json:"windowHint"`
	Debug             bool                `json:"debug"`
	ComponentErrors   []stormError        `json:"componentErrors"` // newest first, one per task at most
	SpoutSummary      []stormSpoutWindow  `json:"spoutSummary,omitempty"`
	BoltStats         []stormBoltWindow   `json:"boltStats,omitempty"`
	ExecutorStats     []stormExecutorStat `json:"executorStats"`
}

type stormError struct {
	ErrorTime          int64  `json:"errorTime"` // unix milliseconds
	ErrorHost          string `json:"errorHost"`
	ErrorPort          *int   `json:"errorPort"`
	ErrorWorkerLogLink string `json:"errorWorkerLogLink"`
	ErrorLapsedSecs    int64  `json:"errorLapsedSecs"`
	Error              string `json:"error"`
	ErrorTask          int    `json:"errorTask"` // goshelter's own
}

type stormSpoutWindow struct {
	WindowPretty    string `json:"windowPretty"`
	Window          string `json:"window"`
	Emitted         int64  `json:"emitted"`
	Transferred     int64  `json:"transferred"`
	CompleteLatency string `json:"completeLatency"`
	Acked           int64  `json:"acked"`
	Failed          int64  `json:"failed"`
}

type stormBoltWindow struct {
	WindowPretty   string `json:"windowPretty"`
	Window         string `json:"window"`
	Emitted        int64  `json:"emitted"`
	Transferred    int64  `json:"transferred"`
	ExecuteLatency string `json:"executeLatency"`
	Executed       int64  `json:"executed"`
	ProcessLatency string `json:"processLatency"`
	Acked          int64  `json:"acked"`
	Failed         int64  `json:"failed"`
	Capacity       string `json:"capacity"`
}

// stormExecutorStat is one task over the requested window: an executor runs
// one task in goshelter.
type stormExecutorStat struct {
	ID              string `json:"id"` // "[task-task]"
	Host            string `json:"host"`
	Port            *int   `json:"port"`
	WorkerLogLink   string `json:"workerLogLink"`
	Uptime          string `json:"uptime"`
	UptimeSeconds   int64  `json:"uptimeSeconds"`
	Emitted         int64  `json:"emitted"`
	Transferred     int64  `json:"transferred"`
	Acked           int64  `json:"acked"`
	Failed          int64  `json:"failed"`
	CompleteLatency string `json:"completeLatency,omitempty"` // spouts
	Executed        int64  `json:"executed"`
	ExecuteLatency  string `json:"executeLatency,omitempty"` // bolts
	ProcessLatency  string `json:"processLatency,omitempty"` // bolts
	Capacity        string `json:"capacity,omitempty"`       // bolts
	// goshelter's own
	Task          int            `json:"task"`
	Pending       int64          `json:"pending"`
	MailboxDepth  int            `json:"mailboxDepth"`
	LastError     string         `json:"lastError"`
	LastErrorTime *int64         `json:"lastErrorTime"` // unix seconds
	Metrics       map[string]any `json:"metrics,omitempty"`
	stormCheckpoint
}

// stormAPI serves Storm's REST shape for one topology.
type stormAPI struct {
	topo  *dsl.Topology
	stats func() supervision.Stats
	hist  history
	host  string // errorHost and host: this process's host name
}

// topologyID is the id the API knows topo by: its name, as a topology has one
// run per process.
func (a *stormAPI) topologyID() string { return a.topo.Name }

func (a *stormAPI) summary(w http.ResponseWriter, _ *http.Request) {
	cur := a.stats()
	writeJSON(w, http.StatusOK, stormSummary{Topologies: []stormTopologySummary{a.topologySummary(cur)}})
}

func (a *stormAPI) topologySummary(cur supervision.Stats) stormTopologySummary {
	tasks := len(cur.Tasks)
	if tasks == 0 { // between incarnations: what the next one will run
		for _, c := range a.topo.Components {
			tasks += c.Parallelism
		}
		tasks += len(a.topo.AckerTasks)
	}
	return stormTopologySummary{
		ID: a.topologyID(), EncodedID: url.PathEscape(a.topologyID()), Name: a.topo.Name, Status: status(cur),
		Uptime: prettyDuration(cur.Uptime), UptimeSeconds: int64(cur.Uptime.Seconds()),
		TasksTotal: tasks, WorkersTotal: 1, ExecutorsTotal: tasks, ReplicationCount: 1,
		Incarnation: cur.Incarnation, Restarts: cur.Restarts,
	}
}

// status is Storm's topology status, from the latest lifecycle event: ACTIVE,
// or goshelter's RESTARTING (between incarnations), STOPPED and FAILED (gave up
// restarting).
func status(cur supervision.Stats) string {
	if n := len(cur.Events); n > 0 {
		switch cur.Events[n-1].Kind {
		case supervision.Failed, supervision.Restarting:
			return "RESTARTING"
		case supervision.GaveUp:
			return "FAILED"
		case supervision.Stopped:
			return "STOPPED"
		}
	}
	return "ACTIVE"
}

// request reads the topology id and the window of r; it answers the error
// itself and returns false when they are not ones it serves.
func (a *stormAPI) request(w http.ResponseWriter, r *http.Request) (window string, ok bool) {
	if id := r.PathValue("id"); id != a.topologyID() {
		writeJSON(w, http.StatusNotFound, apiError{Error: "Not Found", ErrorMessage: fmt.Sprintf("no topology %q: this process runs %q", id, a.topologyID())})
		return "", false
	}
	window = r.URL.Query().Get("window")
	switch window {
	case "":
		return windowAllTime, true // Storm's default
	case windowTenMinutes, windowThreeHours, windowOneDay, windowAllTime:
		return window, true
	}
	writeJSON(w, http.StatusBadRequest, apiError{Error: "Bad Request", ErrorMessage: fmt.Sprintf("window %q: goshelter serves Storm's %q, %q, %q and %q",
		window, windowTenMinutes, windowThreeHours, windowOneDay, windowAllTime)})
	return "", false
}

// windows returns cur over each of Storm's windows (the last ten minutes,
// three hours, day, and all time, in that order), and the one the request
// chose.
func (a *stormAPI) windows(cur supervision.Stats, window string) (all []windowed, chosen windowed) {
	for _, name := range stormWindows {
		w := a.hist.window(cur, name)
		all = append(all, w)
		if name == window {
			chosen = w
		}
	}
	return all, chosen
}

func (a *stormAPI) topology(w http.ResponseWriter, r *http.Request) {
	window, ok := a.request(w, r)
	if !ok {
		return
	}
	sys := r.URL.Query().Get("sys") == "1"
	cur := a.stats()
	all, chosen := a.windows(cur, window)
	t := stormTopology{
		stormTopologySummary: a.topologySummary(cur),
		MsgTimeout:           int64(a.topo.Settings.MessageTimeout.Seconds()),
		Window:               window, WindowHint: windowHint(window),
		Debug:         a.topo.Settings.Debug,
		TopologyStats: make([]stormWindowStats, 0, len(all)),
		Spouts:        []stormSpout{},
		Bolts:         []stormBolt{},
		Configuration: configuration(a.topo),
		InFlight:      cur.InFlight,
		Events:        events(cur.Events),
		Stateful:      a.topo.HasState(),
	}
	for _, w := range all {
		t.TopologyStats = append(t.TopologyStats, a.topologyWindow(cur, w))
	}
	sums := chosen.byComponent(cur)
	for _, c := range a.topo.Components {
		if c.Spout != nil {
			t.Spouts = append(t.Spouts, a.spout(cur, c.ID, sums[c.ID]))
		} else {
			t.Bolts = append(t.Bolts, a.bolt(cur, c.ID, sums[c.ID]))
		}
	}
	if sys {
		t.Bolts = append(t.Bolts, a.bolt(cur, ackerID, sums[ackerID]))
	}
	writeJSON(w, http.StatusOK, t)
}

// ackerID is the component id of the acker tasks.
const ackerID = "__acker"

func (a *stormAPI) topologyWindow(cur supervision.Stats, w windowed) stormWindowStats {
	s := stormWindowStats{WindowPretty: windowPretty(w), Window: w.window}
	var spouts supervision.TaskStats
	kinds := map[int]string{}
	for _, t := range cur.Tasks {
		kinds[t.Task] = t.Kind
	}
	for id, c := range w.tasks {
		switch kinds[id] {
		case "spout":
			stats.Add(&spouts, c)
			fallthrough
		case "bolt":
			s.Emitted += c.Emitted
			s.Transferred += c.Transferred
		}
	}
	s.Acked, s.Failed = spouts.Acked, spouts.Failed
	s.CompleteLatency = msString(spouts.CompleteTime, spouts.CompleteSamples)
	return s
}

func (a *stormAPI) lastError(cur supervision.Stats, id string) stormLastError {
	e := stormLastError{}
	sum := cur.Components[id]
	if sum.LastError == "" {
		return e
	}
	at, lapsed := sum.LastErrorTime.Unix(), int64(cur.Time.Sub(sum.LastErrorTime).Seconds())
	e.LastError, e.ErrorHost, e.ErrorTime, e.ErrorLapsedSecs, e.ErrorTask = sum.LastError, a.host, &at, &lapsed, sum.LastErrorTask
	return e
}

// parallelism is the number of tasks of component id in every incarnation.
func (a *stormAPI) parallelism(id string) int {
	if c := a.topo.Component(id); c != nil {
		return c.Parallelism
	}
	return len(a.topo.AckerTasks)
}

func (a *stormAPI) spout(cur supervision.Stats, id string, s componentWindow) stormSpout {
	n := a.parallelism(id)
	return stormSpout{
		SpoutID: id, EncodedSpoutID: url.PathEscape(id), Executors: n, Tasks: n,
		Emitted: s.c.Emitted, Transferred: s.c.Transferred, Acked: s.c.Acked, Failed: s.c.Failed,
		CompleteLatency: msString(s.c.CompleteTime, s.c.CompleteSamples),
		stormLastError:  a.lastError(cur, id), Pending: cur.Components[id].Pending,
		OutsideCheckpoint: a.outsideCheckpoint(id),
		stormCheckpoint:   checkpointOf(cur.Components[id]),
	}
}

// outsideCheckpoint reports whether spout id takes no part in the
// checkpoints of a topology with state (dsl.OutsideCheckpoint).
func (a *stormAPI) outsideCheckpoint(id string) bool {
	c := a.topo.Component(id)
	return a.topo.HasState() && c != nil && c.Spout != nil && c.Spout.Reliable && c.OutsideCheckpoint
}

func (a *stormAPI) bolt(cur supervision.Stats, id string, s componentWindow) stormBolt {
	n := a.parallelism(id)
	return stormBolt{
		BoltID: id, EncodedBoltID: url.PathEscape(id), Executors: n, Tasks: n,
		Emitted: s.c.Emitted, Transferred: s.c.Transferred, Acked: s.c.Acked, Failed: s.c.Failed, Executed: s.c.Executed,
		Capacity:       fmt.Sprintf("%.3f", finite(s.capacity)),
		ExecuteLatency: msString(s.c.ExecuteTime, s.c.Executed),
		ProcessLatency: msString(s.c.ProcessTime, s.c.ProcessSamples),
		stormLastError: a.lastError(cur, id), MailboxDepth: cur.Components[id].MailboxDepth,
		stormCheckpoint: checkpointOf(cur.Components[id]),
	}
}

func (a *stormAPI) component(w http.ResponseWriter, r *http.Request) {
	window, ok := a.request(w, r)
	if !ok {
		return
	}
	id := r.PathValue("component")
	kind := ""
	if c := a.topo.Component(id); c != nil {
		kind = "bolt"
		if c.Spout != nil {
			kind = "spout"
		}
	} else if id == ackerID {
		kind = "bolt"
	} else {
		writeJSON(w, http.StatusNotFound, apiError{Error: "Not Found", ErrorMessage: fmt.Sprintf("topology %q has no component %q", a.topologyID(), id)})
		return
	}
	cur := a.stats()
	all, chosen := a.windows(cur, window)
	c := stormComponent{
		ID: id, EncodedID: url.PathEscape(id), Name: a.topo.Name, TopologyID: a.topologyID(),
		EncodedTopologyID: url.PathEscape(a.topologyID()), TopologyStatus: status(cur), ComponentType: kind,
		Window: window, WindowHint: windowHint(window), Debug: a.topo.Settings.Debug,
		ComponentErrors: []stormError{}, ExecutorStats: []stormExecutorStat{},
	}
	for _, w := range all {
		s := w.byComponent(cur)[id]
		if kind == "spout" {
			c.SpoutSummary = append(c.SpoutSummary, stormSpoutWindow{
				WindowPretty: windowPretty(w), Window: w.window, Emitted: s.c.Emitted, Transferred: s.c.Transferred,
				CompleteLatency: msString(s.c.CompleteTime, s.c.CompleteSamples), Acked: s.c.Acked, Failed: s.c.Failed,
			})
		} else {
			c.BoltStats = append(c.BoltStats, stormBoltWindow{
				WindowPretty: windowPretty(w), Window: w.window, Emitted: s.c.Emitted, Transferred: s.c.Transferred,
				ExecuteLatency: msString(s.c.ExecuteTime, s.c.Executed), Executed: s.c.Executed,
				ProcessLatency: msString(s.c.ProcessTime, s.c.ProcessSamples), Acked: s.c.Acked, Failed: s.c.Failed,
				Capacity: fmt.Sprintf("%.3f", finite(s.capacity)),
			})
		}
	}
	for _, t := range cur.Tasks {
		if t.Component != id {
			continue
		}
		c.ExecutorStats = append(c.ExecutorStats, a.executor(cur, t, chosen, kind))
		if t.LastError != "" {
			c.ComponentErrors = append(c.ComponentErrors, stormError{
				ErrorTime: t.LastErrorTime.UnixMilli(), ErrorHost: a.host, ErrorLapsedSecs: int64(cur.Time.Sub(t.LastErrorTime).Seconds()),
				Error: t.LastError, ErrorTask: t.Task,
			})
		}
	}
	c.Tasks = a.parallelism(id)
	c.Executors = c.Tasks
	sort.SliceStable(c.ComponentErrors, func(i, j int) bool { return c.ComponentErrors[i].ErrorTime > c.ComponentErrors[j].ErrorTime })
	writeJSON(w, http.StatusOK, c)
}

func (a *stormAPI) executor(cur supervision.Stats, t supervision.TaskStats, w windowed, kind string) stormExecutorStat {
	c := w.tasks[t.Task]
	e := stormExecutorStat{
		ID: fmt.Sprintf("[%d-%d]", t.Task, t.Task), Host: a.host,
		Uptime: prettyDuration(cur.Uptime), UptimeSeconds: int64(cur.Uptime.Seconds()),
		Emitted: c.Emitted, Transferred: c.Transferred, Acked: c.Acked, Failed: c.Failed, Executed: c.Executed,
		Task: t.Task, Pending: t.Pending, MailboxDepth: t.MailboxDepth, LastError: t.LastError,
		Metrics: jsonSafe(t.Metrics), stormCheckpoint: checkpointOf(t),
	}
	if t.LastError != "" {
		at := t.LastErrorTime.Unix()
		e.LastErrorTime = &at
	}
	if kind == "spout" {
		e.CompleteLatency = msString(c.CompleteTime, c.CompleteSamples)
	} else {
		e.ExecuteLatency = msString(c.ExecuteTime, c.Executed)
		e.ProcessLatency = msString(c.ProcessTime, c.ProcessSamples)
		e.Capacity = fmt.Sprintf("%.3f", finite(capacity(c, w.span)))
	}
	return e
}

// componentWindow is a component's counters over a window: sums over its
// tasks, and the busiest task's capacity.
type componentWindow struct {
	c        supervision.TaskStats
	capacity float64
}

func (w windowed) byComponent(cur supervision.Stats) map[string]componentWindow {
	out := map[string]componentWindow{}
	for _, t := range cur.Tasks {
		s := out[t.Component]
		c := w.tasks[t.Task]
		stats.Add(&s.c, c)
		s.capacity = max(s.capacity, capacity(c, w.span))
		out[t.Component] = s
	}
	return out
}

// capacity is Storm's: the fraction of the window spent executing.
func capacity(c supervision.TaskStats, span time.Duration) float64 {
	if span <= 0 {
		return 0
	}
	return float64(c.ExecuteTime) / float64(span)
}

func events(es []supervision.Event) []stormEvent {
	out := make([]stormEvent, 0, len(es))
	for _, e := range es {
		se := stormEvent{Time: e.Time, Kind: e.Kind.String(), Incarnation: e.Incarnation, Attempt: e.Attempt, DelaySecs: e.Delay.Seconds()}
		if e.Err != nil {
			se.Error = e.Err.Error()
		}
		out = append(out, se)
	}
	return out
}

// msString is a mean latency in milliseconds as Storm writes it: a string
// with three decimals.
func msString(total time.Duration, n int64) string {
	if n <= 0 {
		return "0.000"
	}
	return fmt.Sprintf("%.3f", ms(total)/float64(n))
}

// windowHint is Storm's name for a window: "10m 0s", "3h 0m 0s",
// "1d 0h 0m 0s" or "All time".
func windowHint(window string) string {
	if i, ok := spanOf(window); ok {
		return prettyDuration(spans[i].length)
	}
	return "All time"
}

// windowPretty names the span a window's figures cover, which for a window of
// fixed length can be a little more or less (see history.window).
func windowPretty(w windowed) string {
	if w.window == windowAllTime {
		return "All time"
	}
	return prettyDuration(w.span)
}

// prettyDuration writes d as Storm's UI does: "1d 2h 3m 4s", "3m 4s", "4s".
func prettyDuration(d time.Duration) string {
	s := int64(d.Seconds())
	days, hours, mins, secs := s/86400, s/3600%24, s/60%60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh %dm %ds", days, hours, mins, secs)
	case hours > 0:
		return fmt.Sprintf("%dh %dm %ds", hours, mins, secs)
	case mins > 0:
		return fmt.Sprintf("%dm %ds", mins, secs)
	}
	return fmt.Sprintf("%ds", secs)
}

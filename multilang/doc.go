// Package multilang speaks Apache Storm's multilang protocol (JSON over a child
// process's stdin and stdout) in both directions: goshelter topologies host shell
// spouts and bolts written in any language ([Spout], [Bolt]), and a goshelter
// binary serves its own Go components to a Storm cluster ([Serve], [Flux]).
//
// # Framing
//
// Every message is JSON followed by a line "end". The host writes one line of
// JSON; a child's message may span several lines. [FrameReader] splits a
// stream, [Decode] parses a child's message and applies Storm's defaults (no
// stream means "default", a single-string "anchors" is one anchor, emits want task
// ids unless "need_task_ids" is false, log levels 0..4 are trace..error and no
// level means info), [DecodeHost] parses a host's message. Neither panics on any
// input; bad input becomes a [ProtocolError] naming the component, the task and
// the data.
//
// # Shell components in a goshelter topology
//
//	t := dsl.New("wordcount", nil)
//	t.Streams(Word{})
//	sentences := t.Spout("sentences", multilang.Spout[Sentence](multilang.Cmd("python3", "sentences.py").InDir(dir)))
//	split := t.Bolt("split", multilang.Bolt(multilang.Cmd("python3", "split.py").InDir(dir),
//		multilang.Output("default", Word{})), dsl.Parallelism(2))
//	t.Anchored(sentences, split, dsl.Shuffle[Sentence]())
//
// Each task starts its own child (exec, no shell) in a process group of its own
// and sends the handshake: the conf, a pid directory and the context with Storm's
// eight keys (real task ids, streams, groupings). The child must answer with its
// pid and create an empty file named after it in the pid directory.
//
// Shell tuples are JSON arrays; goshelter tuples are structs. The i-th value of a
// child's tuple fills the i-th exported field of the stream's struct (decoded by
// encoding/json into the field's type), and inputs reach the child as their
// fields in order. The stream a child emits on is looked up among the ids it
// declared with [Output] and the topology's stream names.
//
// A shell spout is synchronous, as in Storm: next, ack, fail, activate and
// deactivate are each answered by sync, the runtime calls next only below
// topology.max.spout.pending, and the child is timed only while the host waits
// for its sync. A shell bolt is asynchronous: the child gets each input with an
// id of its own, and acks, fails, anchors and emits (also direct) at any time;
// an emit is answered with the destination task ids unless it says
// "need_task_ids": false (a direct emit gets no answer). The child gets a
// heartbeat tuple about once a second and must answer it with sync; any message
// counts as a sign of life. Log messages go to the task's zap logger at their
// level, "error" is logged and the child keeps running, "metrics" updates the
// task's stats. Acking or failing an unknown id is logged as bad input and
// ignored.
//
// # Failure
//
// A child that exits, stays silent longer than topology.subprocess.timeout.secs
// ([dsl.SubprocessTimeout]), or sends what is not multilang fails its task with
// a [ChildError]: the inputs it held are failed (their trees nacked) and
// supervision restarts the topology. Its stderr is read on its own goroutine from
// the start and logged at warn level, rate limited; the error quotes its end.
// When a task stops, its child's stdin is closed and it gets SIGTERM, then
// SIGKILL after the grace period ([WithGracePeriod]); the host reaps it and
// joins every goroutine it started before the task's stop completes.
//
// These need the runtime hooks in dsl: [dsl.TaskInfo] Post, Fail, Model and
// Metric, [dsl.TaskEmitter], [dsl.SpoutTaskEmitter], [dsl.SpoutOpener] and
// [dsl.Closer].
//
// # Serving Go components to Storm
//
// [Serve] runs inside a child process started by Storm's ShellSpout or
// ShellBolt: it reads the handshake, finds the component named by its
// "componentid" in the topology and runs it over stdin and stdout. [Flux]
// writes a Flux definition that runs the same binary for every component; see
// docs/STORM.md.
package multilang

// Package multilang runs Apache Storm's shell components inside goshelter and
// goshelter's Go components inside Storm, over Storm's multilang protocol (JSON
// over a child process's stdin and stdout). [Spout] and [Bolt] make a shell
// component of any program; [Serve] and [Flux] let a Storm cluster run a
// goshelter binary's own components.
//
// # Shell components in a goshelter topology
//
//	t := dsl.New("wordcount", nil)
//	t.Streams(Word{})
//	sentences := t.Spout("sentences", multilang.Spout[Sentence](multilang.Command{
//		Path: "python3", Args: []string{"sentences.py"}, Dir: dir}))
//	split := t.Bolt("split", multilang.Bolt(multilang.Command{
//		Path: "python3", Args: []string{"split.py"}, Dir: dir,
//		Outputs: map[string]any{"default": Word{}}}), dsl.Parallelism(2))
//	t.Anchored(sentences, split, dsl.Shuffle[Sentence]())
//
// Each task starts its own child (exec, no shell) in a process group of its own
// and sends the handshake: the conf, a pid directory and the context with
// Storm's eight keys (real task ids, streams, groupings). The child must answer
// with its pid and create an empty file named after it in the pid directory.
//
// Every message is JSON followed by a line "end"; the host writes one line of
// JSON and accepts several from a child. What a child leaves out gets Storm's
// defaults: no stream means "default", a single-string "anchors" is one anchor,
// emits want task ids unless "need_task_ids" is false, log levels 0..4 are
// trace..error and no level means info.
//
// Shell tuples are JSON arrays; goshelter tuples are structs. The i-th value of
// a child's tuple fills the i-th exported field of the stream's struct (decoded
// by encoding/json into the field's type), and inputs reach the child as their
// fields in order. The stream a child emits on is looked up among the ids it
// declared in [Command.Outputs] and the topology's stream names.
//
// A shell spout is synchronous, as in Storm: next, ack, fail, activate and
// deactivate are each answered by sync, the runtime calls next only below
// topology.max.spout.pending (every emit counts, however many one next makes),
// and the child is timed only while the host waits for its sync; it may emit
// direct. A shell bolt is asynchronous: the child gets each input with an
// id of its own, and acks, fails, anchors and emits (also direct) at any time;
// an emit is answered with the destination task ids unless it says
// "need_task_ids": false (a direct emit gets no answer). Inputs wait for the
// child in a queue of topology.shellbolt.max.pending (default 100, at most
// 2^31-1, which takes memory only as inputs queue) messages; when it is full
// the bolt's Execute waits, which backs pressure up the topology. The other
// way, a child that says more than its task can take (its emits wait for a
// slow downstream) is slowed down: the host reads no more of its stdout while
// a few hundred of its messages wait for the task, so the child blocks on its
// pipe and memory stays bounded, and it is not timed meanwhile. The child gets a heartbeat tuple about once a second and must
// answer it with sync; any message counts as a sign of life. Log messages go to
// the task's zap logger at their level, "error" is logged and the child keeps
// running, "metrics" updates the task's stats. Acking or failing an unknown id
// is logged as bad input and ignored. An emit the topology cannot route (a
// misused direct emit) follows the emit contract of goshelter's own
// components (dsl.Emitter): a shell spout's message fails, a shell bolt's
// inputs the emit was anchored to fail, the error is logged, and the child
// keeps running.
//
// # Failure
//
// A child that exits, stays silent longer than topology.subprocess.timeout.secs
// ([dsl.SubprocessTimeout]), or sends what is not multilang fails its task with
// an error wrapping [ErrChildFailed] (and [ErrTimeout] for silence) that names
// the component, the task, the command and the pid, says how the process ended
// and quotes the end of its stderr, or the offending message. The inputs it held
// are failed (their trees nacked) and supervision restarts the topology. Its
// stderr is read on its own goroutine from the start and logged at warn level,
// rate limited. When a task stops, its child's stdin is closed and it gets
// SIGTERM, then SIGKILL after [Command.GracePeriod]; the host reaps it and joins
// every goroutine it started before the task's stop completes. Once a child is
// reaped, however it ended, what is left of its process group is killed and
// the host's ends of its pipes are closed.
//
// # Serving Go components to Storm
//
// [Serve] runs inside a child process started by Storm's ShellSpout or
// ShellBolt: it reads the handshake, finds the component named by its
// "componentid" in the topology and runs it over stdin and stdout, with the
// host's task ids, reporting failures with Storm's "error" command. [Flux]
// writes a Flux definition that runs the same binary for every component,
// with the stream ids the components use; see docs/STORM.md for packaging and
// submitting it, step by step.
package multilang

package component

import "fmt"

// The checks below are the reasons a tuple cannot be routed, stated once for
// both hosts (the runtime's router, multilang.Serve), so that a misuse reads
// the same wherever the component runs.

// NotAStream is the EmitError of an emit from component whose tuple's type is
// no stream of the topology; streams is how many streams the topology has.
func NotAStream(component string, tuple any, streams int) *EmitError {
	reason := "its type is not a stream of the topology (declare it with Streams)"
	if streams == 0 {
		reason = "the topology has no streams"
	}
	return &EmitError{Component: component, Stream: fmt.Sprintf("%T", tuple), Reason: reason}
}

// CheckDirect returns the EmitError of an emit from component on stream to
// task direct (0: through the groupings), or nil when the emit is right.
// subscribed tells whether the stream has a subscriber, isDirect whether its
// subscribers use direct grouping, and subscribes whether task direct is one
// of them (false when direct is 0).
func CheckDirect(component, stream string, direct int, subscribed, isDirect, subscribes bool) *EmitError {
	switch {
	case direct != 0 && subscribed && !isDirect:
		return &EmitError{Component: component, Stream: stream, Task: direct, Reason: "EmitDirect on a stream whose subscribers do not use direct grouping"}
	case direct == 0 && isDirect:
		return &EmitError{Component: component, Stream: stream, Reason: "the stream is direct: use EmitDirect with a task id"}
	case direct != 0 && !subscribes:
		return &EmitError{Component: component, Stream: stream, Task: direct, Reason: fmt.Sprintf("task %d does not subscribe to the stream", direct)}
	}
	return nil
}

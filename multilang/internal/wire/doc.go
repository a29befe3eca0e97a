// Package wire is the codec of Storm's multilang protocol: the frames both
// sides write and the messages inside them, as goshelter's host and its Serve
// runner read and write them. It knows nothing of topologies, processes or
// tasks, so every function here is a plain function of bytes that never panics
// on any input, which is what the fuzz targets check.
//
// # Framing
//
// Every message is JSON followed by a line "end". A host writes one line of
// JSON; a child's message may span several lines. [FrameReader] splits a
// stream, [Decode] parses a child's message and applies Storm's defaults (no
// stream means "default", a single-string "anchors" is one anchor, emits want
// task ids unless "need_task_ids" is false, log levels 0..4 are trace..error
// and no level means info), [DecodeHost] parses a host's message. Errors
// describe what is wrong without quoting the input: callers add who sent it
// and a [Preview] of the data.
package wire

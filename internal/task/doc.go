// Package task holds the semantics of the tasks dsl describes: the runtime
// builds each task of a spout or bolt here, around the typed half its spec
// carries (dsl.TypedBolt, dsl.TypedSource), as Beam's exec builds a node
// around the DoFn its graph holds. Both hosts (actors, and multilang.Serve
// under Storm) run the tasks it builds, so each rule is stated once:
//
//   - an auto-ack bolt acks an input when its handler returns nil and fails
//     it on an error; a Terminator fails every input; a manual bolt leaves
//     both to its handler; a stateful bolt acks as an auto-ack one does (the
//     runtime holds the ack until the checkpoint commits);
//   - a tick goes to the handler's Tick hook, if it has one, and is never
//     acked or failed;
//   - an input of another type than the handler takes is failed;
//   - a reliable spout keeps each message pending under its tree's root and
//     tells its Source the outcome; a message no subscriber tracks is acked
//     at once; a stop with trees open nacks them; an unreliable spout emits
//     untracked.
//
// The optional hooks of handlers and Sources are found here by type
// assertion; dsl's Build checks their names, so a misspelt hook is an error
// there rather than a silent no-op here.
package task

// Package protocol names the messages that flow between tasks, as Go types: the
// commands a component receives and sends (after Storm's multilang protocol and
// FsShelter's InCommand/OutCommand) and the lifecycle messages every task gets.
// The runtime uses them for control traffic and tracing; multilang maps them to JSON.
package protocol

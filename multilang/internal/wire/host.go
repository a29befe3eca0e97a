package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Handshake is the host's first message to a child.
type Handshake struct {
	Conf    map[string]any `json:"conf"`
	PidDir  string         `json:"pidDir"`
	Context Context        `json:"context"`
}

// Context describes the child's task and its place in the topology, with the
// eight keys Storm sends. Stream ids are as each component names them.
type Context struct {
	TaskToComponent map[string]string `json:"task->component"`
	TaskID          int               `json:"taskid"`
	ComponentID     string            `json:"componentid"`
	// Streams are the streams this component emits.
	Streams              []string            `json:"streams"`
	StreamToOutputFields map[string][]string `json:"stream->outputfields"`
	// StreamToTargets maps each output stream to its subscribers' groupings.
	StreamToTargets map[string]map[string]Grouping `json:"stream->target->grouping"`
	// SourceToStreamGroupings maps each input component and stream to the
	// grouping this component subscribed with.
	SourceToStreamGroupings map[string]map[string]Grouping `json:"source->stream->grouping"`
	// SourceToStreamFields maps each input component to the fields of all its streams.
	SourceToStreamFields map[string]map[string][]string `json:"source->stream->fields"`
}

// Grouping is a grouping as Storm's context shows it: "SHUFFLE", "FIELDS"
// (with fields; global grouping is FIELDS with none), "ALL" or "DIRECT".
type Grouping struct {
	Type   string   `json:"type"`
	Fields []string `json:"fields,omitempty"`
}

// MarshalJSON always writes "fields" for a FIELDS grouping, as Storm does.
func (g Grouping) MarshalJSON() ([]byte, error) {
	if g.Type != "FIELDS" {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{g.Type})
	}
	return json.Marshal(struct {
		Type   string   `json:"type"`
		Fields []string `json:"fields"`
	}{g.Type, append([]string{}, g.Fields...)})
}

// Tuple is a bolt input as the host sends it: a tuple, a heartbeat
// (stream "__heartbeat", task -1) or a tick (component "__system", stream "__tick").
type Tuple struct {
	ID     string            `json:"id"`
	Comp   string            `json:"comp"`
	Stream string            `json:"stream"`
	Task   int               `json:"task"`
	Values []json.RawMessage `json:"tuple"`
}

// OutTuple is a Tuple as a host writes it: its values are still Go values,
// so they are encoded once, by the goroutine that writes the frame.
type OutTuple struct {
	ID     string `json:"id"`
	Comp   string `json:"comp"`
	Stream string `json:"stream"`
	Task   int    `json:"task"`
	Values []any  `json:"tuple"`
}

// SpoutCommand is what a host sends a spout: next, ack, fail, activate or
// deactivate (ID only for ack and fail).
type SpoutCommand struct {
	Command Kind `json:"command"`
	ID      ID   `json:"id,omitempty"`
}

// HostMessage is one message from a host, as a child (multilang.Serve) reads it.
type HostMessage struct {
	Kind      Kind
	Handshake *Handshake // KindHandshake
	ID        ID         // KindAck and KindFail: the spout message id
	Tuple     *Tuple     // KindTuple
	TaskIDs   []int      // KindTaskIDs
}

// DecodeHost parses one message from a host: the handshake, a spout command, a
// bolt tuple or an array of task ids. It never panics.
func DecodeHost(data []byte) (*HostMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var ids []int
		if err := json.Unmarshal(trimmed, &ids); err != nil {
			return nil, errors.New("task ids are not an array of numbers")
		}
		return &HostMessage{Kind: KindTaskIDs, TaskIDs: ids}, nil
	}
	var probe struct {
		Command *string         `json:"command"`
		ID      json.RawMessage `json:"id"`
		Context json.RawMessage `json:"context"`
		Tuple   json.RawMessage `json:"tuple"`
	}
	if err := unmarshalObject(trimmed, &probe); err != nil {
		return nil, err
	}
	switch {
	case probe.Command != nil:
		return decodeSpoutCommand(Kind(*probe.Command), probe.ID)
	case !isNull(probe.Context):
		var h Handshake
		if err := json.Unmarshal(trimmed, &h); err != nil {
			return nil, fmt.Errorf("handshake: %w", err)
		}
		return &HostMessage{Kind: KindHandshake, Handshake: &h}, nil
	case !isNull(probe.Tuple):
		var t Tuple
		if err := json.Unmarshal(trimmed, &t); err != nil {
			return nil, fmt.Errorf("tuple: %w", err)
		}
		return &HostMessage{Kind: KindTuple, Tuple: &t}, nil
	}
	return nil, errors.New("message is neither a command, a handshake nor a tuple")
}

func decodeSpoutCommand(k Kind, rawID json.RawMessage) (*HostMessage, error) {
	switch k {
	case KindNext, KindActivate, KindDeactivate:
		return &HostMessage{Kind: k}, nil
	case KindAck, KindFail:
		id, err := optionalID(rawID)
		if err == nil && id.IsZero() {
			err = errors.New(`"id" is missing`)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		return &HostMessage{Kind: k, ID: id}, nil
	}
	return nil, fmt.Errorf("unknown command %q", string(k))
}

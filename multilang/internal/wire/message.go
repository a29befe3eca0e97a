package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Kind names a multilang command.
type Kind string

// Commands a child sends to its host.
const (
	KindEmit    Kind = "emit"
	KindAck     Kind = "ack"
	KindFail    Kind = "fail"
	KindSync    Kind = "sync"
	KindLog     Kind = "log"
	KindError   Kind = "error"
	KindMetrics Kind = "metrics"
	KindPid     Kind = "pid" // the handshake answer {"pid": N}, which has no "command"
)

// Messages a host sends to its child.
const (
	KindHandshake  Kind = "handshake"
	KindNext       Kind = "next"
	KindActivate   Kind = "activate"
	KindDeactivate Kind = "deactivate"
	KindTuple      Kind = "tuple"   // a bolt input, heartbeat or tick
	KindTaskIDs    Kind = "taskids" // the answer to an emit: a JSON array of task ids
)

// DefaultStream is Storm's stream id for emits that name none.
const DefaultStream = "default"

// Storm's system component and streams, as a shell bolt sees them.
const (
	SystemComponent = "__system"
	HeartbeatStream = "__heartbeat"
	TickStream      = "__tick"
)

// Level is a log message's level, numbered as in Storm's multilang protocol.
type Level int

// The levels a child may give; anything else is read as LevelInfo.
const (
	LevelTrace Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)

func (l Level) String() string {
	switch l {
	case LevelTrace:
		return "trace"
	case LevelDebug:
		return "debug"
	case LevelInfo:
		return "info"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ID is a message or tuple id exactly as it appeared in JSON: a quoted string or
// a number. Spout message ids are echoed back to the child verbatim; the zero ID
// means none (an unreliable spout emit).
type ID string

// StringID returns the ID of the JSON string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a string always marshals
	return ID(b)
}

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id == "" }

// String returns the id's value: the string without quotes, or the number.
func (id ID) String() string {
	var s string
	if json.Unmarshal([]byte(id), &s) == nil {
		return s
	}
	return string(id)
}

// MarshalJSON writes the id as it was received.
func (id ID) MarshalJSON() ([]byte, error) {
	if id == "" {
		return []byte("null"), nil
	}
	return []byte(id), nil
}

// Message is one message from a child, decoded by [Decode] with Storm's defaults
// applied. Which fields are set depends on Kind.
type Message struct {
	Kind Kind
	// ID is the spout message id of an emit (zero for an unreliable emit) or the
	// input id an ack or fail refers to.
	ID ID
	// Stream is an emit's stream, "default" when the child named none.
	Stream string
	// Task is the target of a direct emit; 0 for an emit through the groupings.
	Task int
	// Tuple holds an emit's values, undecoded.
	Tuple []json.RawMessage
	// Anchors are the input ids a bolt's emit is anchored to (a single string in
	// the JSON is one anchor).
	Anchors []string
	// NeedTaskIDs is false only when the emit said "need_task_ids": false.
	NeedTaskIDs bool
	// Msg is the text of a log or error.
	Msg string
	// Level is a log's level, info when the child gave none.
	Level Level
	// Name and Params are a metrics update.
	Name   string
	Params json.RawMessage
	// Pid is the handshake answer.
	Pid int
}

// wireMessage is a child's message as JSON, before defaults and checks.
type wireMessage struct {
	Command     *string         `json:"command"`
	ID          json.RawMessage `json:"id"`
	Stream      *string         `json:"stream"`
	Task        json.RawMessage `json:"task"`
	Tuple       json.RawMessage `json:"tuple"`
	Anchors     json.RawMessage `json:"anchors"`
	NeedTaskIDs *bool           `json:"need_task_ids"`
	Msg         *string         `json:"msg"`
	Level       json.RawMessage `json:"level"`
	Name        *string         `json:"name"`
	Params      json.RawMessage `json:"params"`
	Pid         json.RawMessage `json:"pid"`
}

// Decode parses one message from a child (without its "end" line) and applies
// Storm's defaults. It never panics and never keeps data; errors describe what is
// wrong without quoting the input (callers add the component and a preview).
func Decode(data []byte) (*Message, error) {
	var w wireMessage
	if err := unmarshalObject(data, &w); err != nil {
		return nil, err
	}
	if w.Command == nil {
		if len(w.Pid) > 0 {
			pid, err := positiveInt(w.Pid, "pid")
			return &Message{Kind: KindPid, Pid: pid}, err
		}
		return nil, errors.New(`message has no "command"`)
	}
	m := &Message{Kind: Kind(*w.Command)}
	decode, ok := decoders[m.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown command %q", *w.Command)
	}
	if err := decode(m, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Kind, err)
	}
	return m, nil
}

var decoders = map[Kind]func(*Message, *wireMessage) error{
	KindEmit:    decodeEmit,
	KindAck:     decodeSettle,
	KindFail:    decodeSettle,
	KindSync:    func(*Message, *wireMessage) error { return nil },
	KindLog:     decodeLog,
	KindError:   decodeError,
	KindMetrics: decodeMetrics,
}

func decodeEmit(m *Message, w *wireMessage) error {
	var err error
	if m.ID, err = optionalID(w.ID); err != nil {
		return err
	}
	m.Stream = DefaultStream
	if w.Stream != nil && *w.Stream != "" {
		m.Stream = *w.Stream
	}
	if isNull(w.Task) {
		m.Task = 0
	} else if m.Task, err = intOf(w.Task, "task"); err != nil {
		return err
	} else if m.Task < 0 {
		return fmt.Errorf("task %d is negative", m.Task)
	}
	if isNull(w.Tuple) {
		return errors.New(`"tuple" is missing`)
	}
	if err := json.Unmarshal(w.Tuple, &m.Tuple); err != nil {
		return errors.New(`"tuple" is not a JSON array`)
	}
	if m.Anchors, err = anchors(w.Anchors); err != nil {
		return err
	}
	m.NeedTaskIDs = w.NeedTaskIDs == nil || *w.NeedTaskIDs
	return nil
}

func decodeSettle(m *Message, w *wireMessage) error {
	id, err := optionalID(w.ID)
	if err == nil && id.IsZero() {
		err = errors.New(`"id" is missing`)
	}
	m.ID = id
	return err
}

func decodeLog(m *Message, w *wireMessage) error {
	if w.Msg != nil {
		m.Msg = *w.Msg
	}
	m.Level = LevelInfo
	if isNull(w.Level) {
		return nil
	}
	l, err := intOf(w.Level, "level")
	if err != nil {
		return err
	}
	if l >= int(LevelTrace) && l <= int(LevelError) {
		m.Level = Level(l)
	}
	return nil
}

func decodeError(m *Message, w *wireMessage) error {
	if w.Msg != nil {
		m.Msg = *w.Msg
	}
	return nil
}

func decodeMetrics(m *Message, w *wireMessage) error {
	if w.Name == nil || *w.Name == "" {
		return errors.New(`"name" is missing`)
	}
	m.Name = *w.Name
	if !isNull(w.Params) {
		m.Params = append(json.RawMessage(nil), w.Params...)
	}
	return nil
}

// unmarshalObject decodes data, which must be one JSON object, into v.
func unmarshalObject(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return errors.New("empty message")
	}
	if trimmed[0] != '{' {
		return errors.New("message is not a JSON object")
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// optionalID accepts a string, a number or nothing.
func optionalID(raw json.RawMessage) (ID, error) {
	if isNull(raw) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		return ID(raw), nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return ID(raw), nil
	}
	return "", errors.New(`"id" is neither a string nor a number`)
}

// anchors accepts a string, an array of strings (or numbers), or nothing.
func anchors(raw json.RawMessage) ([]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) != nil {
		return nil, errors.New(`"anchors" is neither a string nor an array`)
	}
	if len(many) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(many))
	for _, a := range many {
		id, err := optionalID(a)
		if err != nil || id.IsZero() {
			return nil, errors.New(`"anchors" holds something that is not an id`)
		}
		out = append(out, id.String())
	}
	return out, nil
}

// intOf reads a JSON number that must be a whole number within 32 bits.
func intOf(raw json.RawMessage, what string) (int, error) {
	var f float64
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') || json.Unmarshal(raw, &f) != nil {
		return 0, fmt.Errorf("%q is not a number", what)
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("%q is not a whole number in range", what)
	}
	return int(f), nil
}

func positiveInt(raw json.RawMessage, what string) (int, error) {
	n, err := intOf(raw, what)
	if err == nil && n <= 0 {
		err = fmt.Errorf("%q is %d; it must be positive", what, n)
	}
	return n, err
}

// MarshalJSON encodes m as a child would send it, so Decode(MarshalJSON(m))
// gives m back.
func (m *Message) MarshalJSON() ([]byte, error) {
	switch m.Kind {
	case KindPid:
		return json.Marshal(map[string]int{"pid": m.Pid})
	case KindEmit:
		return json.Marshal(emitWire{Command: KindEmit, ID: m.ID, Stream: m.Stream, Task: m.Task,
			Tuple: nonNil(m.Tuple), Anchors: m.Anchors, NeedTaskIDs: needTaskIDs(m.NeedTaskIDs)})
	case KindAck, KindFail:
		return json.Marshal(struct {
			Command Kind `json:"command"`
			ID      ID   `json:"id"`
		}{m.Kind, m.ID})
	case KindLog:
		return json.Marshal(struct {
			Command Kind   `json:"command"`
			Msg     string `json:"msg"`
			Level   Level  `json:"level"`
		}{m.Kind, m.Msg, m.Level})
	case KindError:
		return json.Marshal(map[string]string{"command": string(m.Kind), "msg": m.Msg})
	case KindMetrics:
		return json.Marshal(struct {
			Command Kind            `json:"command"`
			Name    string          `json:"name"`
			Params  json.RawMessage `json:"params,omitempty"`
		}{m.Kind, m.Name, m.Params})
	case KindSync:
		return []byte(`{"command":"sync"}`), nil
	}
	return nil, fmt.Errorf("multilang: cannot encode a %q message", m.Kind)
}

type emitWire struct {
	Command     Kind              `json:"command"`
	ID          ID                `json:"id,omitempty"`
	Stream      string            `json:"stream,omitempty"`
	Task        int               `json:"task,omitempty"`
	Tuple       []json.RawMessage `json:"tuple"`
	Anchors     []string          `json:"anchors,omitempty"`
	NeedTaskIDs *bool             `json:"need_task_ids,omitempty"`
}

func nonNil(t []json.RawMessage) []json.RawMessage {
	if t == nil {
		return []json.RawMessage{}
	}
	return t
}

var falseValue = false

func needTaskIDs(need bool) *bool {
	if need {
		return nil
	}
	return &falseValue
}

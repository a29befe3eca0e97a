package multilang

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Command says how each task of a shell component runs its child process and
// talks to it. Only Path (or Line) is required: the zero value of every other
// field means Storm's or goshelter's default, so that a shell component is one
// literal with no option functions.
type Command struct {
	// Path is the program and Args its arguments. They go to the operating
	// system as they are: no shell parses or expands them.
	Path string
	Args []string
	// Line replaces Path and Args for commands that come as one string (a
	// flag, a config file). It is split into words as a POSIX shell splits
	// them (spaces separate words, single quotes keep everything literal,
	// double quotes keep spaces, a backslash escapes the next character) but
	// nothing is expanded: no variables, globs or redirections. A Line that
	// does not split, or is given with Path or Args, fails the component's
	// tasks when they start and makes [Flux] return an error.
	Line string
	// Dir is the child's working directory; empty means the host's.
	Dir string
	// Env holds "KEY=value" entries added to (and overriding) the host's
	// environment.
	Env []string
	// Outputs declares the streams the child emits on, by the id the child
	// uses (Storm's "default" when it names none), each with a value of the Go
	// struct its tuples become; that type must be a stream of the topology. A
	// child may also name any stream of the topology by its goshelter name. A
	// spout may only declare its own output type, to give it another id. When
	// several ids map to one type, the context and Flux name the stream by the
	// first id in byte order.
	Outputs map[string]any
	// GracePeriod is how long the child has to exit after SIGTERM before it is
	// killed (zero: 2 s).
	GracePeriod time.Duration
	// Heartbeat is how often a bolt's child gets a heartbeat tuple (zero: 1 s,
	// and at most a third of topology.subprocess.timeout.secs so a hung child
	// is noticed in time). Spout children get none: as in Storm, they are timed
	// only while the host waits for their sync.
	Heartbeat time.Duration
	// MaxMessage is the largest message accepted from the child, in bytes
	// (zero: 16 MiB); a larger one is bad input.
	MaxMessage int
}

// resolved returns c with Line split into Path and Args, and its slices and
// map copied: a component's definition must not change when the caller
// reuses its Command.
func (c Command) resolved() (Command, error) {
	c.Args = slices.Clone(c.Args)
	c.Env = slices.Clone(c.Env)
	c.Outputs = maps.Clone(c.Outputs)
	if c.Line == "" {
		if c.Path == "" {
			return c, errors.New("the command has no Path (nor Line)")
		}
		return c, nil
	}
	if c.Path != "" || len(c.Args) > 0 {
		return c, fmt.Errorf("command line %q is given with Path or Args; give one or the other", c.Line)
	}
	words, err := splitWords(c.Line)
	if err != nil {
		return c, fmt.Errorf("command line %q: %w", c.Line, err)
	}
	if len(words) == 0 {
		return c, fmt.Errorf("command line %q is empty", c.Line)
	}
	c.Path, c.Args, c.Line = words[0], words[1:], ""
	return c, nil
}

// argv returns the path followed by the arguments.
func (c Command) argv() []string {
	return append([]string{c.Path}, c.Args...)
}

// quoted returns the command line for logs and errors, quoting the words that
// need it, so that it splits back into the same words.
func (c Command) quoted() string {
	words := c.argv()
	for i, w := range words {
		if w == "" || strings.ContainsFunc(w, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`"'\`, r) }) {
			words[i] = fmt.Sprintf("%q", w)
		}
	}
	return strings.Join(words, " ")
}

func splitWords(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if escaped {
		return nil, errors.New("ends with a backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

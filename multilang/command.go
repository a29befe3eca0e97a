package multilang

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Command is a child process to run. Path and Args go to the operating system
// as they are: no shell parses or expands them.
type Command struct {
	Path string
	Args []string
	// Dir is the child's working directory; empty means the host's.
	Dir string
	// Env holds "KEY=value" entries added to (and overriding) the host's environment.
	Env []string
}

// Cmd returns the command that runs path with args.
func Cmd(path string, args ...string) Command {
	return Command{Path: path, Args: args}
}

// InDir returns c running in directory dir.
func (c Command) InDir(dir string) Command {
	c.Dir = dir
	return c
}

// WithEnv returns c with "KEY=value" entries added to its environment.
func (c Command) WithEnv(kv ...string) Command {
	c.Env = append(append([]string(nil), c.Env...), kv...)
	return c
}

// Argv returns the path followed by the arguments.
func (c Command) Argv() []string {
	return append([]string{c.Path}, c.Args...)
}

// String returns the command line, quoting words that need it.
func (c Command) String() string {
	words := c.Argv()
	for i, w := range words {
		if w == "" || strings.ContainsFunc(w, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`"'\`, r) }) {
			words[i] = fmt.Sprintf("%q", w)
		}
	}
	return strings.Join(words, " ")
}

// ParseCommand splits a command line into a [Command] the way a POSIX shell
// splits words: spaces separate words, single quotes keep everything literal,
// double quotes keep spaces, and a backslash escapes the next character. Nothing
// is expanded: no variables, globs or redirections.
func ParseCommand(line string) (Command, error) {
	words, err := splitWords(line)
	if err != nil {
		return Command{}, fmt.Errorf("multilang: command line %q: %w", line, err)
	}
	if len(words) == 0 {
		return Command{}, fmt.Errorf("multilang: command line %q is empty", line)
	}
	return Cmd(words[0], words[1:]...), nil
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

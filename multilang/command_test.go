package multilang_test

import (
	"reflect"
	"testing"

	"github.com/goshelter/goshelter/multilang"
)

func TestParseCommandSplitsWordsWithoutExpanding(t *testing.T) {
	cases := map[string][]string{
		"python3 split.py":                  {"python3", "split.py"},
		"  node   bolt.js  ":                {"node", "bolt.js"},
		`python3 "my script.py" 'a b' c\ d`: {"python3", "my script.py", "a b", "c d"},
		`sh -c 'echo $HOME; ls *'`:          {"sh", "-c", "echo $HOME; ls *"},
		`a "it's" 'say "hi"' "\"q\""`:       {"a", "it's", `say "hi"`, `"q"`},
		`empty "" arg`:                      {"empty", "", "arg"},
	}
	for line, want := range cases {
		c, err := multilang.ParseCommand(line)
		if err != nil {
			t.Errorf("ParseCommand(%q): %v", line, err)
			continue
		}
		if got := c.Argv(); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCommand(%q) = %q, want %q", line, got, want)
		}
		again, err := multilang.ParseCommand(c.String())
		if err != nil || !reflect.DeepEqual(again.Argv(), want) {
			t.Errorf("String() %q does not parse back: %q, %v", c.String(), again.Argv(), err)
		}
	}
	for _, bad := range []string{"", "   ", `a "b`, `a 'b`, `a\`} {
		if _, err := multilang.ParseCommand(bad); err == nil {
			t.Errorf("ParseCommand(%q) accepted it", bad)
		}
	}
}

func TestCommandBuilders(t *testing.T) {
	c := multilang.Cmd("python3", "x.py").InDir("/d").WithEnv("A=1")
	c2 := c.WithEnv("B=2")
	if c.Dir != "/d" || !reflect.DeepEqual(c.Env, []string{"A=1"}) || !reflect.DeepEqual(c2.Env, []string{"A=1", "B=2"}) {
		t.Errorf("builders: %+v %+v", c, c2)
	}
}

package multilang

import (
	"reflect"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/dsl"
)

func TestLineSplitsIntoWordsWithoutExpanding(t *testing.T) {
	cases := map[string][]string{
		"python3 split.py":                  {"python3", "split.py"},
		"  node   bolt.js  ":                {"node", "bolt.js"},
		`python3 "my script.py" 'a b' c\ d`: {"python3", "my script.py", "a b", "c d"},
		`sh -c 'echo $HOME; ls *'`:          {"sh", "-c", "echo $HOME; ls *"},
		`a "it's" 'say "hi"' "\"q\""`:       {"a", "it's", `say "hi"`, `"q"`},
		`empty "" arg`:                      {"empty", "", "arg"},
	}
	for line, want := range cases {
		c, err := Command{Line: line}.resolved()
		if err != nil {
			t.Errorf("Line %q: %v", line, err)
			continue
		}
		if got := c.argv(); !reflect.DeepEqual(got, want) || c.Line != "" {
			t.Errorf("Line %q = %q (Line left %q), want %q", line, got, c.Line, want)
		}
		again, err := Command{Line: c.quoted()}.resolved()
		if err != nil || !reflect.DeepEqual(again.argv(), want) {
			t.Errorf("quoted %q does not split back: %q, %v", c.quoted(), again.argv(), err)
		}
	}
	for bad, why := range map[string]string{"": "no Path", "   ": "is empty", `a "b`: "unterminated quote", `a 'b`: "unterminated quote", `a\`: "ends with a backslash"} {
		if _, err := (Command{Line: bad}).resolved(); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Line %q: error %v, want one saying %q", bad, err, why)
		}
	}
	if _, err := (Command{Line: "python3 x.py", Args: []string{"y"}}).resolved(); err == nil || !strings.Contains(err.Error(), "one or the other") {
		t.Errorf("Line with Args: %v", err)
	}
}

func TestResolvedCommandDoesNotShareTheCallersSlices(t *testing.T) {
	args, env := []string{"x.py"}, []string{"A=1"}
	outputs := map[string]any{"default": struct{}{}}
	c, err := Command{Path: "python3", Args: args, Env: env, Outputs: outputs}.resolved()
	if err != nil {
		t.Fatal(err)
	}
	args[0], env[0], outputs["other"] = "changed", "B=2", 1
	if c.Args[0] != "x.py" || c.Env[0] != "A=1" || len(c.Outputs) != 1 {
		t.Errorf("the definition changed with the caller's Command: %+v", c)
	}
}

func TestDefDefaultsAndOutputOrder(t *testing.T) {
	type A struct{ X int }
	d := newDef(Command{Path: "p", Outputs: map[string]any{"b": A{}, "a": A{}}}, false)
	if d.grace != defaultGracePeriod || d.heartbeat != defaultHeartbeat || d.maxMessage != 16<<20 {
		t.Errorf("defaults: grace %v heartbeat %v max %d", d.grace, d.heartbeat, d.maxMessage)
	}
	if name, ok := d.alias(reflect.TypeFor[A]()); !ok || name != "a" {
		t.Errorf("alias = %q, %v; want the first id in byte order", name, ok)
	}
}

func TestACommandThatCannotRunFailsItsTasksWhenTheyStart(t *testing.T) {
	for _, spout := range []bool{false, true} {
		var failed error
		info := dsl.TaskInfo{Component: "split", Task: 3, Fail: func(err error) { failed = err }}
		d := newDef(Command{Line: `python3 'split.py`}, spout)
		var task any
		if spout {
			task = newShellSpout(d, info)
		} else {
			task = newShellBolt(d, info)
		}
		if failed == nil || !strings.Contains(failed.Error(), `component "split" task 3: command line "python3 'split.py": unterminated quote`) {
			t.Errorf("spout %v: task failed with %v", spout, failed)
		}
		if err := task.(interface{ Close() error }).Close(); err != nil {
			t.Errorf("spout %v: Close: %v", spout, err)
		}
	}
}

package wire_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/multilang/internal/wire"
)

func frames(t *testing.T, input string, max int) ([]string, error) {
	t.Helper()
	fr := wire.NewFrameReader(strings.NewReader(input), max)
	var out []string
	for {
		f, err := fr.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(f))
		if len(out) > len(input) { // each frame takes at least its end line
			t.Fatalf("%d frames from %d bytes: the reader does not move on", len(out), len(input))
		}
	}
}

func TestFrameReaderSplitsOnTheEndLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	cases := []struct {
		name, in string
		want     []string
	}{
		{"one line each", "{\"a\":1}\nend\n{\"b\":2}\nend\n", []string{`{"a":1}`, `{"b":2}`}},
		{"multi-line JSON", "{\n\"a\": 1\n}\nend\n", []string{"{\n\"a\": 1\n}"}},
		{"CRLF line ends", "{\"a\":1}\r\nend\r\n", []string{`{"a":1}`}},
		{"end inside a line is data", "{\"msg\":\"the end\"}\nend\n", []string{`{"msg":"the end"}`}},
		{"an indented end is data", "x\n end\nend\n", []string{"x\n end"}},
		{"last end without newline", "{}\nend", []string{"{}"}},
		{"empty message", "end\n", []string{""}},
		{"a line longer than the buffer", long + "\nend\n", []string{long}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := frames(t, c.in, 0)
			if err != io.EOF { // the clean end is io.EOF itself, never wrapped
				t.Fatalf("ended with %v, want io.EOF", err)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("frames = %q, want %q", got, c.want)
			}
		})
	}
}

func TestFrameReaderErrors(t *testing.T) {
	_, err := frames(t, "{\"a\":1}\nend\n{\"b\":", 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || err == io.ErrUnexpectedEOF {
		t.Errorf("input ending mid-message: %v, want a wrapped io.ErrUnexpectedEOF", err)
	}
	exact := strings.Repeat("x", 63) + "\n" // 64 bytes with its newline
	if got, err := frames(t, exact+"end\n", 64); len(got) != 1 || got[0] != exact[:63] || err != io.EOF {
		t.Errorf("a message of exactly the maximum: %q, %v; want it read", got, err)
	}
	_, err = frames(t, strings.Repeat("y", 64)+"\nend\n", 64)
	if !errors.Is(err, wire.ErrTooLarge) {
		t.Errorf("a message one byte over the maximum: %v, want ErrTooLarge", err)
	}
	_, err = frames(t, strings.Repeat("y", 100)+"\nend\n", 64)
	if !errors.Is(err, wire.ErrTooLarge) || !strings.Contains(err.Error(), "yyyy") {
		t.Errorf("oversized message: %v, want ErrTooLarge quoting the data", err)
	}
}

func TestWriteFrame(t *testing.T) {
	var b strings.Builder
	if err := wire.WriteFrame(&b, map[string]any{"msg": "<a & b>\nnext"}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "{\"msg\":\"<a & b>\\nnext\"}\nend\n"; got != want {
		t.Errorf("WriteFrame wrote %q, want %q", got, want)
	}
	if err := wire.WriteFrame(&b, func() {}); err == nil {
		t.Error("WriteFrame accepted a value JSON cannot encode")
	}
}

func TestPreviewShortensLongData(t *testing.T) {
	if p, want := wire.Preview([]byte(strings.Repeat("z", 200))), `"`+strings.Repeat("z", 200)+`"`; p != want {
		t.Errorf("Preview of 200 bytes = %q, want them all", p)
	}
	p := wire.Preview([]byte(strings.Repeat("z", 1000)))
	if len(p) > 260 || !strings.HasSuffix(p, "(1000 bytes)") {
		t.Errorf("Preview = %q", p)
	}
}

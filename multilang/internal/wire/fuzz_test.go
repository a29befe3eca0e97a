package wire_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// FuzzChildStream checks the host's reading of a child: FrameReader never
// returns a message over its limit, always ends (io.EOF unwrapped at a clean
// end), Decode never panics on a frame, and every frame survives being framed
// again.
func FuzzChildStream(f *testing.F) {
	for _, seed := range []string{
		"{\"pid\":42}\nend\n{\"command\":\"emit\",\"tuple\":[\"a\"]}\nend\n{\"command\":\"sync\"}\nend\n",
		"{\"command\":\"emit\",\n \"anchors\":\"7\",\n \"tuple\":[1]}\nend\r\n",
		"{\"command\":\"ack\",\"id\":\"no-such-id\"}\nend\n{\"command\":\"fail\",\"id\":-1}\nend",
		"{\"command\":\"log\",\"msg\":\"end\"}\nend\nend\nend\n",
		"not json\nend\n",
		"{\"command\":\"emit\",\"tuple\":[",
		"  end\nend \n\rend\n",
		strings.Repeat("x", 300) + "\nend\n",
	} {
		f.Add([]byte(seed), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		max := 16 + int(limit%1024)
		got := fuzzFrames(t, data, max)
		for _, frame := range got {
			_, _ = wire.Decode(frame) // must not panic
		}
		var again bytes.Buffer
		for _, frame := range got {
			again.Write(frame)
			again.WriteString("\nend\n")
		}
		back := fuzzFrames(t, again.Bytes(), max+1)
		if len(back) != len(got) {
			t.Fatalf("%d frames framed again read back as %d", len(got), len(back))
		}
		for i := range got {
			if !bytes.Equal(back[i], got[i]) {
				t.Fatalf("frame %d %q read back as %q", i, got[i], back[i])
			}
		}
	})
}

// fuzzFrames reads every frame of data, checking the reader's promises.
func fuzzFrames(t *testing.T, data []byte, max int) [][]byte {
	t.Helper()
	fr := wire.NewFrameReader(bytes.NewReader(data), max)
	var out [][]byte
	for {
		frame, err := fr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) && err != io.EOF {
				t.Fatalf("the clean end must be io.EOF itself, got %v", err)
			}
			return out
		}
		if len(frame) > max {
			t.Fatalf("frame of %d bytes over the limit %d", len(frame), max)
		}
		out = append(out, append([]byte(nil), frame...))
		if len(out) > len(data)/3+1 { // every frame ends with at least "end"
			t.Fatalf("%d frames from %d bytes: the reader does not advance", len(out), len(data))
		}
	}
}

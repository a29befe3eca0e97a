package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxMessage is the largest message, in bytes, a [FrameReader] accepts
// unless told otherwise.
const DefaultMaxMessage = 16 << 20

// endLine is the line that ends every message in both directions.
const endLine = "end"

// ErrTooLarge is wrapped by the error a [FrameReader] returns for a message over
// its size limit.
var ErrTooLarge = errors.New("multilang: message too large")

// FrameReader splits a multilang stream into messages: lines of JSON up to a
// line that is exactly "end" (a trailing "\r" is ignored). A message may span
// several lines, as Storm's host accepts from children. It is not safe for
// concurrent use.
type FrameReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewFrameReader reads messages from r, refusing any over max bytes (max <= 0
// means [DefaultMaxMessage]).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &FrameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next message without its "end" line. The slice is only
// valid until the next call. At a clean end of input (no partial message) it
// returns io.EOF itself, unwrapped; input that ends inside a message gives an
// error wrapping io.ErrUnexpectedEOF.
func (f *FrameReader) Next() ([]byte, error) {
	f.buf = f.buf[:0]
	lineStart := true
	for {
		chunk, err := f.r.ReadSlice('\n')
		complete := err == nil
		if lineStart && (complete || errors.Is(err, io.EOF)) && isEnd(chunk) {
			return bytes.TrimRight(f.buf, "\r\n"), nil
		}
		if len(f.buf)+len(chunk) > f.max {
			return nil, fmt.Errorf("%w: over %d bytes, starting %s", ErrTooLarge, f.max, Preview(append(f.buf, chunk...)))
		}
		f.buf = append(f.buf, chunk...)
		lineStart = complete
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(f.buf) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("input ended inside a message (no %q line): %w after %s", endLine, io.ErrUnexpectedEOF, Preview(f.buf))
		default:
			return nil, err
		}
	}
}

// Buffered reports how many bytes are already read and waiting, so a caller can
// tell whether Next would block.
func (f *FrameReader) Buffered() int { return f.r.Buffered() }

func isEnd(line []byte) bool {
	return string(bytes.TrimRight(line, "\r\n")) == endLine
}

// AppendFrame appends v as one multilang message: compact JSON on one line, then
// the "end" line.
func AppendFrame(dst []byte, v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode adds the newline
		return dst, err
	}
	dst = append(dst, b.Bytes()...)
	return append(dst, endLine+"\n"...), nil
}

// WriteFrame writes v to w as one multilang message.
func WriteFrame(w io.Writer, v any) error {
	b, err := AppendFrame(nil, v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// previewLen bounds how much of a bad message errors quote.
const previewLen = 200

// Preview quotes at most the first 200 bytes of data for an error message.
func Preview(data []byte) string {
	if len(data) <= previewLen {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q... (%d bytes)", data[:previewLen], len(data))
}

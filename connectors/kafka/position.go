package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// positionVersion is the first byte of an encoded position. A position is
// stored in checkpoints that outlive the code that wrote them: a later
// encoding gets a new version, and decodePosition keeps reading this one.
const positionVersion = 1

// encodePosition encodes the next offset of each partition, sorted by topic
// and partition so that equal positions encode to equal bytes:
//
//	version (1 byte) | topics (uvarint) |
//	  per topic: name length (uvarint) name | partitions (uvarint) |
//	    per partition: id (uvarint) offset (uvarint)
func encodePosition(next map[key]int64) []byte {
	ks := make([]key, 0, len(next))
	for k := range next {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b key) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.id) - int(b.id)
	})
	out := binary.AppendUvarint([]byte{positionVersion}, uint64(countTopics(ks)))
	for i := 0; i < len(ks); {
		j := i
		for j < len(ks) && ks[j].topic == ks[i].topic {
			j++
		}
		out = binary.AppendUvarint(out, uint64(len(ks[i].topic)))
		out = append(out, ks[i].topic...)
		out = binary.AppendUvarint(out, uint64(j-i))
		for _, k := range ks[i:j] {
			out = binary.AppendUvarint(out, uint64(k.id))
			out = binary.AppendUvarint(out, uint64(next[k]))
		}
		i = j
	}
	return out
}

func countTopics(sorted []key) int {
	n := 0
	for i, k := range sorted {
		if i == 0 || sorted[i-1].topic != k.topic {
			n++
		}
	}
	return n
}

var errShortPosition = errors.New("truncated")

// decodePosition reads what encodePosition wrote; an error names what is
// wrong with it.
func decodePosition(b []byte) (map[key]int64, error) {
	if len(b) == 0 {
		return nil, errors.New("kafka: position: empty")
	}
	if b[0] != positionVersion {
		return nil, fmt.Errorf("kafka: position: version %d, this spout reads version %d", b[0], positionVersion)
	}
	d := decoder{b: b[1:]}
	topics := d.uvarint()
	out := map[key]int64{}
	for range topics {
		name := d.bytes(d.uvarint())
		parts := d.uvarint()
		for range parts {
			id, off := d.uvarint(), d.uvarint()
			if d.err == nil && (id > 1<<31-1 || off > 1<<63-1) {
				d.err = fmt.Errorf("partition %d at offset %d is out of range", id, off)
			}
			out[key{string(name), int32(id)}] = int64(off)
		}
		if d.err != nil {
			break
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the last partition", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("kafka: position of %d bytes: %w", len(b), d.err)
	}
	return out, nil
}

// decoder reads uvarints and byte strings, keeping the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShortPosition
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShortPosition
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

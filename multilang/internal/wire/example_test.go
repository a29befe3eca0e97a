package wire_test

import (
	"fmt"
	"os"

	"github.com/goshelter/goshelter/multilang/internal/wire"
)

// Decode applies Storm's defaults: no stream means "default", a single-string
// anchor is one anchor, and task ids are wanted unless the emit says otherwise.
func ExampleDecode() {
	m, err := wire.Decode([]byte(`{"command":"emit","anchors":"-6955","tuple":["snow","white"]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Kind, m.Stream, m.Anchors, len(m.Tuple), m.NeedTaskIDs)

	_, err = wire.Decode([]byte(`{"command":"emit","tuple":"oops"}`))
	fmt.Println(err)
	// Output:
	// emit default [-6955] 2 true
	// emit: "tuple" is not a JSON array
}

// WriteFrame writes one message the way a host does: a line of JSON, then "end".
func ExampleWriteFrame() {
	_ = wire.WriteFrame(os.Stdout, map[string]string{"command": "next"})
	// Output:
	// {"command":"next"}
	// end
}

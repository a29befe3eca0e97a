package observe

import (
	"fmt"

	"github.com/goshelter/goshelter/dsl"
)

// graphView is the live graph the status page draws: the topology's shape with
// the figures of a report (rates over its window, at least a second) on it.
// It is goshelter's own, at /api/v1/topology/{id}/graph: Storm's REST API has
// no documented graph.
type graphView struct {
	Topology   string      `json:"topology"`
	WindowSecs float64     `json:"windowSecs"`
	Components []graphNode `json:"components"` // in definition order
	Edges      []graphEdge `json:"edges"`      // one per subscription, in definition order
}

type graphNode struct {
	ID                string  `json:"id"`
	Kind              string  `json:"kind"` // spout or bolt
	Parallelism       int     `json:"parallelism"`
	Capacity          float64 `json:"capacity"`
	EmitRate          float64 `json:"emitRate"`
	ExecuteRate       float64 `json:"executeRate"`
	AckRate           float64 `json:"ackRate"`
	FailRate          float64 `json:"failRate"`
	ExecuteLatencyMs  float64 `json:"executeLatencyMs"`
	CompleteLatencyMs float64 `json:"completeLatencyMs"`
	Failing           bool    `json:"failing"` // it has a last error
}

type graphEdge struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Stream      string  `json:"stream"`
	Grouping    string  `json:"grouping"`
	Anchored    bool    `json:"anchored"`
	Rate        float64 `json:"rate"` // tuples/s from From to To, all streams together
	Transferred int64   `json:"transferred"`
	AllStreams  bool    `json:"allStreams"` // another edge joins the same pair: Rate counts both
}

func newGraphView(topo *dsl.Topology, r report) graphView {
	g := graphView{Topology: topo.Name, WindowSecs: r.WindowSecs, Components: []graphNode{}, Edges: []graphEdge{}}
	for _, c := range topo.Components {
		n := graphNode{ID: c.ID, Kind: "bolt", Parallelism: c.Parallelism}
		if c.Spout != nil {
			n.Kind = "spout"
		}
		if f, ok := r.component(c.ID); ok {
			n.Capacity, n.EmitRate, n.ExecuteRate = finite(f.Capacity), finite(f.EmitRate), finite(f.ExecuteRate)
			n.AckRate, n.FailRate = finite(f.AckRate), finite(f.FailRate)
			n.ExecuteLatencyMs, n.CompleteLatencyMs = finite(f.ExecuteLatencyMs), finite(f.CompleteLatencyMs)
			n.Failing = f.LastError != ""
		}
		g.Components = append(g.Components, n)
	}
	pairs := map[[2]string]int{}
	for _, e := range topo.Edges {
		pairs[[2]string{e.From.ID, e.To.ID}]++
	}
	for _, e := range topo.Edges {
		f := r.flow(e.From.ID, e.To.ID)
		g.Edges = append(g.Edges, graphEdge{
			From: e.From.ID, To: e.To.ID, Stream: e.Stream.Name, Grouping: fmt.Sprint(e.Grouping), Anchored: e.Anchored,
			Rate: finite(f.Rate), Transferred: f.Transferred, AllStreams: pairs[[2]string{e.From.ID, e.To.ID}] > 1,
		})
	}
	return g
}

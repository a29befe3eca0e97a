package observe

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
)

// writeJSON answers v as indented JSON. It encodes v before writing anything,
// so a value encoding/json refuses (a NaN, a channel) becomes a 500 with a JSON
// error body rather than a 200 with an empty or cut body, which is what
// encoding into the response directly would give.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(apiError{Error: "Internal Server Error", ErrorMessage: fmt.Sprintf("observe: encoding the answer: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n')) // a failed write means the client left
}

// apiError is the body of an error answer, in the shape Storm's UI answers
// errors with.
type apiError struct {
	Error        string `json:"error"`
	ErrorMessage string `json:"errorMessage"`
}

// jsonSafe returns metrics with every value JSON can encode: components report
// whatever they like through TaskInfo.Metric, and one NaN must not cost the
// whole answer. Non-finite floats become the strings Prometheus writes for them
// ("NaN", "+Inf", "-Inf"), maps and slices decoded from a shell component's
// JSON are walked, and any other value JSON refuses becomes its fmt text.
func jsonSafe(metrics map[string]any) map[string]any { return safeMap(metrics, 0) }

// maxDepth bounds the walk, so that a map holding itself ends.
const maxDepth = 32

func safeMap(m map[string]any, depth int) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = safeValue(v, depth+1)
	}
	return out
}

func safeValue(v any, depth int) any {
	if depth > maxDepth {
		return "..."
	}
	switch x := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return v
	case float64:
		return safeFloat(x)
	case float32:
		return safeFloat(float64(x))
	case map[string]any:
		return safeMap(x, depth)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = safeValue(e, depth+1)
		}
		return out
	}
	if _, err := json.Marshal(v); err != nil { // a struct with a NaN field, a func, a cycle...
		return fmt.Sprint(v)
	}
	return v
}

// safeFloat returns f, or its Prometheus spelling when JSON has no number for it.
func safeFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return f
}

// finite returns f, or 0 when it is NaN or infinite, for figures the observer
// computes itself (a rate, a capacity): they are numbers in every answer.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

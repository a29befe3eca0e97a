package dsl

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names a user chooses (the topology's, component ids, stream names, field
// names) end up in Prometheus labels, the status page, REST API paths, Flux
// YAML and multilang JSON. Build rejects what one of them cannot carry, as
// Storm's nimbus does, rather than have every renderer cope:
//
//   - bytes that are not UTF-8: Prometheus refuses such a label value (its
//     const-metric constructors panic on one) and JSON would silently turn
//     them into U+FFFD, so two distinct ids could print the same;
//   - "." and "..": a REST path /component/.. is cleaned away by any HTTP
//     router (Storm's UI addresses components by id in the path);
//   - ids starting with "__", which Storm keeps for its own components and
//     streams (__system, __acker, __tick, __heartbeat);
//   - for the topology name, Storm's own rule (Utils.validateTopologyName):
//     no '/', '.', ':' or '\', since Storm builds file paths and ids from it.

// topologyNameForbidden are the characters Storm refuses in a topology name
// (its TOPOLOGY_NAME_REGEX is ^[^/.:\\]+$).
const topologyNameForbidden = `/.:\`

// topologyNameProblem says why name cannot name a topology, or "".
func topologyNameProblem(name string) string {
	switch {
	case name == "":
		return "topology has no name"
	case !utf8.ValidString(name):
		return fmt.Sprintf("topology name %q is not valid UTF-8", name)
	case strings.ContainsAny(name, topologyNameForbidden):
		return fmt.Sprintf("topology name %q contains one of '/', '.', ':' or '\\', which Storm forbids in topology names", name)
	}
	return ""
}

// idProblem says why id cannot be a component id or a stream name (what is
// "component id" or "stream name"), or "".
func idProblem(what, id string) string {
	switch {
	case !utf8.ValidString(id):
		return fmt.Sprintf("%s %q is not valid UTF-8", what, id)
	case id == "." || id == "..":
		return fmt.Sprintf("%s %q cannot be addressed in a URL path (the status page and REST API use ids in paths)", what, id)
	case strings.HasPrefix(id, "__"):
		return fmt.Sprintf("%s %q is reserved (ids starting with \"__\" belong to the system)", what, id)
	}
	return ""
}

// fieldProblem says why a stream's field name (a `storm` tag) is unusable, or "".
func fieldProblem(stream, field string) string {
	if !utf8.ValidString(field) {
		return fmt.Sprintf("stream %q: field name %q is not valid UTF-8", stream, field)
	}
	return ""
}

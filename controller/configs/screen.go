package configs

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
)

// BrokerLoggerResource is ConfigResource.Type.BROKER_LOGGER's id.
const BrokerLoggerResource int8 = 8

// Resource is a configs request's resource: its type id and name.
type Resource struct {
	Type int8
	Name string
}

// Screening is what ControllerApis' first pass over a configs request
// makes of one resource: altered (validated by the controller), refused at
// once with Err, or dropped without an answer.
type Screening struct {
	Err     *Error
	Dropped bool
}

// Screen is the pass Kafka 4.4's ControllerApis makes over the resources
// of an IncrementalAlterConfigs or AlterConfigs request, in order, before
// the controller sees any (handleIncrementalAlterConfigs,
// handleLegacyAlterConfigs): a type Kafka does not know is
// UNSUPPORTED_VERSION "Unknown resource type N."; a resource (type and
// name) named again is answered INVALID_REQUEST "Duplicate resource." once,
// at its second mention, and none of its mentions is altered (the first
// gets no answer, nor do later ones). With loggersApart (IncrementalAlterConfigs,
// which applies BROKER_LOGGER changes on the spot) BROKER_LOGGER resources
// are not checked for duplicates.
func Screen(resources []Resource, loggersApart bool) []Screening {
	out := make([]Screening, len(resources))
	first := map[Resource]int{}
	duplicate := map[Resource]bool{}
	for i, r := range resources {
		switch {
		case loggersApart && r.Type == BrokerLoggerResource:
		case !knownResourceType(r.Type):
			out[i].Err = &Error{kerr.UnsupportedVersion, "Unknown resource type " + strconv.Itoa(int(r.Type)) + "."}
		case duplicate[r]:
			out[i].Dropped = true
		default:
			at, seen := first[r]
			if !seen {
				first[r] = i
				continue
			}
			duplicate[r] = true
			out[at].Dropped = true
			out[i].Err = &Error{kerr.InvalidRequest, "Duplicate resource."}
		}
	}
	return out
}

// knownResourceType reports whether ConfigResource.Type.forId knows t.
func knownResourceType(t int8) bool {
	return resourceTypeName(t) != "UNKNOWN"
}

//go:build interoplong

package interop

import "testing"

// TestClusterScriptKraftdLong: plain `make cluster` (scripts/cluster.sh with its default
// CONTROLLERS=kraftd): three kraftd controllers, three Kafka 4.4.0 brokers registering
// with the active kraftd controller, and the same round trip as
// TestClusterScriptKafkaControllersLong: a topic with three replicas, acks=all records
// consumed and committed by a group (__consumer_offsets created through an Envelope,
// producer ids allocated by kraftd), every process stopped on SIGTERM.
func TestClusterScriptKraftdLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	clusterScriptRoundTrip(t, "kraftd")
}

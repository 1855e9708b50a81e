//go:build interoplong && interopactive

package interop

import "testing"

// TestClusterScriptKraftdLong: plain `make cluster` (scripts/cluster.sh with its default
// CONTROLLERS=kraftd): three kraftd controllers, three Kafka 4.4.0 brokers registering
// with the active kraftd controller, and the same round trip as
// TestClusterScriptKafkaControllersLong: a topic with three replicas, acks=all records
// consumed and committed by a group, every process stopped on SIGTERM.
//
// It needs kraftd's active controller (broker registration and heartbeats, topic
// creation): until then the brokers never finish starting, hence the interopactive tag.
func TestClusterScriptKraftdLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	clusterScriptRoundTrip(t, "kraftd")
}

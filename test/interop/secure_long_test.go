//go:build interoplong

package interop

import "testing"

// TestSecureMixedQuorumLong: the mixed quorum of TestSecureMixedQuorum over SSL (mutual
// TLS), over SASL_SSL with PLAIN, and over SASL_SSL with PLAIN between controllers and
// SCRAM-SHA-512 for the tools, each through kill -9 of a kraftd and of a Kafka leader and
// SIGTERM handovers, with identical logs at the end.
func TestSecureMixedQuorumLong(t *testing.T) {
	t.Run("SSL", func(t *testing.T) { runSecureMixed(t, secureScenario{proto: "SSL", long: true}) })
	t.Run("SASL_SSL-PLAIN", func(t *testing.T) {
		runSecureMixed(t, secureScenario{proto: "SASL_SSL", mech: "PLAIN", toolMech: "PLAIN", enabled: []string{"PLAIN"}, long: true})
	})
	t.Run("SASL_SSL-SCRAM-SHA-512", func(t *testing.T) {
		runSecureMixed(t, secureScenario{proto: "SASL_SSL", mech: "PLAIN", toolMech: "SCRAM-SHA-512", enabled: []string{"PLAIN", "SCRAM-SHA-512"}, long: true})
	})
}

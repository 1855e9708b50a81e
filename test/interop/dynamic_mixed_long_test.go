//go:build interoplong

package interop

import "testing"

// TestDynamicMixedQuorumLong is TestDynamicMixedQuorum with kraftd as the majority.
func TestDynamicMixedQuorumLong(t *testing.T) {
	dynamicMixed(t, []bool{true, true, false})
}

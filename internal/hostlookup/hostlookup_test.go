package hostlookup

import "testing"

// localhost resolves through the hosts file; a scoped literal needs an
// interface of that name with an IPv6 address of its kind.
func TestResolves(t *testing.T) {
	if !Resolves("localhost") {
		t.Error("localhost does not resolve")
	}
	if Resolves("fe80::1%no-such-interface") {
		t.Error("a missing interface resolved")
	}
	// lo has ::1 at most, never a link-local address (Java: "no scope_id
	// found").
	if Resolves("fe80::1%lo") {
		t.Error("fe80::1%lo resolved")
	}
}

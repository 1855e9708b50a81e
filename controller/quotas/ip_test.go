package quotas

import "testing"

// ClassifyHost follows JDK 17's InetAddress.getByName (each expectation as
// that JVM answers: a literal is valid, a malformed one fails, the rest is
// looked up; the interop test compares a corpus with a live JVM).
func TestClassifyHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		want HostClass
	}{
		{"1.2.3.4", Literal}, {"127.1", Literal}, {"1.2.3", Literal}, {"3232235777", Literal}, {"0", Literal},
		{"4294967295", Literal}, {"010.1.1.1", Literal}, {"08.1.1.1", Literal}, {"1.2.3.04", Literal},
		{"4294967296", Lookup}, {"1.2.3.256", Lookup}, {"1.2.3.4.5", Lookup}, {"1..2", Lookup}, {"1.2.3.", Lookup},
		{"0x1g", Lookup}, {"1e3", Lookup}, {"abc", Lookup}, {"localhost", Lookup}, {"kafka.example", Lookup},
		{"é", Lookup}, {" 1.2.3.4", Lookup},
		{"0x7f.1", Malformed}, {"0.0x1.1", Malformed}, {"0377.1", Malformed},
		{"::1", Literal}, {"[::1]", Literal}, {"::", Literal}, {"::ffff:1.2.3.4", Literal}, {"fe80::1%1", Literal},
		{"::1.02.3.4", Literal}, {"00001::", Literal}, {"1:2:3:4:5:6:7:8", Literal}, {"1:2:3:4:5:6:1.2.3.4", Literal},
		{"1:2:3:4:5:6:7::", Literal}, {"::1:2:3:4:5:6:7", Literal}, {"fe80::1%", Malformed},
		{"fe80::1%eth0", Lookup}, {"::ffff:1.2.3.4%1", Malformed}, {"1::2::3", Malformed}, {":1", Malformed},
		{"1:2:3:4:5:6:7:8:9", Malformed}, {"a:b", Malformed}, {"12345::", Malformed}, {"::ffff:1.2.3", Malformed},
		{"1:2:3:4:5:6:7:1.2.3.4", Malformed}, {"::%", Malformed},
		{"[1.2.3.4]", Malformed}, {"[]", Malformed}, {"[abc]", Malformed}, {"[x]", Malformed}, {"[::1", Malformed},
		{"::1]", Malformed}, {"", Literal},
	} {
		if got := ClassifyHost(tc.host); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.host, got, tc.want)
		}
	}
}

// ValidIPEntity looks up only what is not a literal.
func TestValidIPEntity(t *testing.T) {
	var asked []string
	lookup := func(h string) bool { asked = append(asked, h); return h == "kafka.example" }
	for host, want := range map[string]bool{"1.2.3.4": true, "0x7f.1": false, "kafka.example": true, "elsewhere.example": false} {
		if got := ValidIPEntity(host, lookup); got != want {
			t.Errorf("%q: %v", host, got)
		}
	}
	if len(asked) != 2 {
		t.Errorf("looked up %q", asked)
	}
}

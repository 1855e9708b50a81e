package javamap

import (
	"slices"
	"testing"
)

func TestStringHash(t *testing.T) {
	for s, want := range map[string]int32{"hello": 99162322, "": 0, "CONTROLLER": 1122520988, "é": 233} {
		if h := StringHash(s); h != want {
			t.Errorf("%q.hashCode() = %d, want %d", s, h, want)
		}
	}
}

func TestCapacities(t *testing.T) {
	for _, tc := range []struct{ n, grown, copied int }{
		{0, 16, 1}, {1, 16, 2}, {12, 16, 32}, {13, 32, 32}, {24, 32, 64}, {25, 64, 64},
	} {
		if c := GrownCapacity(tc.n); c != tc.grown {
			t.Errorf("GrownCapacity(%d) = %d, want %d", tc.n, c, tc.grown)
		}
		if c := CopyCapacity(tc.n); c != tc.copied {
			t.Errorf("CopyCapacity(%d) = %d, want %d", tc.n, c, tc.copied)
		}
	}
	// new HashMap(n) then n puts: 1 -> table 1, resized to 2; 2 -> 2, to 4;
	// 3 -> 4 (3 is not above 3/4 of 4).
	for n, want := range map[int]int{1: 2, 2: 4, 3: 4, 4: 8, 6: 8, 7: 16} {
		if c := PresizedCapacity(n, n); c != want {
			t.Errorf("PresizedCapacity(%d, %d) = %d, want %d", n, n, c, want)
		}
	}
}

// The expected orders are Kafka 4.4's: Endpoints.fromAddVoterRequest puts
// the request's listeners into new HashMap(n); VoterSet copies a HashMap of
// voter ids.
func TestOrder(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"FOO", "BAR"}, []string{"FOO", "BAR"}},
		{[]string{"BAR", "FOO"}, []string{"BAR", "FOO"}},
		{[]string{"A", "B", "C"}, []string{"A", "B", "C"}},
		{[]string{"PLAINTEXT", "CONTROLLER", "SSL"}, []string{"CONTROLLER", "SSL", "PLAINTEXT"}},
	} {
		if got := Order(tc.in, StringHash, PresizedCapacity(len(tc.in), len(tc.in))); !slices.Equal(got, tc.want) {
			t.Errorf("%q: order %q, want %q", tc.in, got, tc.want)
		}
	}
	ints := Order([]int32{100, 7, 3000}, IntHash, CopyCapacity(3))
	if want := []int32{3000, 100, 7}; !slices.Equal(ints, want) {
		t.Errorf("order %v, want %v", ints, want)
	}
}

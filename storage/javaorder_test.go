package storage

import (
	"slices"
	"testing"
)

// The expected orders are what Kafka 4.4's format printed and wrote.
func TestDirsInKafkaOrder(t *testing.T) {
	for _, tc := range []struct{ node, first string }{
		{"A", "data"}, {"B", "data"}, {"C", "meta"}, {"D", "data"}, {"E", "meta"},
	} {
		data, meta := "/tmp/f11/exp/"+tc.node+"/data", "/tmp/f11/exp/"+tc.node+"/meta"
		if got := dirsInKafkaOrder([]string{meta, data}); got[0] != "/tmp/f11/exp/"+tc.node+"/"+tc.first {
			t.Errorf("%s: order %q, Kafka formats %s first", tc.node, got, tc.first)
		}
	}
}

func TestVotersInKafkaOrder(t *testing.T) {
	ids := func(ids ...int32) []InitialController {
		var out []InitialController
		for _, id := range ids {
			out = append(out, InitialController{NodeID: id})
		}
		return out
	}
	// The expected orders are those of Kafka 4.4's
	// DynamicVoters.parse(...).toVoterSet(...).toVotersRecord(0).
	for _, tc := range []struct{ in, want []int32 }{
		{[]int32{3, 1, 2}, []int32{1, 2, 3}},
		{[]int32{5, 2}, []int32{5, 2}},
		{[]int32{1, 17, 33, 2}, []int32{1, 17, 33, 2}},
		{[]int32{16, 1}, []int32{16, 1}},
		{[]int32{100, 7, 3000}, []int32{3000, 100, 7}},
	} {
		var got []int32
		for _, v := range votersInKafkaOrder(ids(tc.in...)) {
			got = append(got, v.NodeID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: order %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestJavaHostString(t *testing.T) {
	for in, want := range map[string]string{
		"localhost": "localhost", "127.0.0.1": "127.0.0.1", "::1": "0:0:0:0:0:0:0:1",
		"fe80::a:0:b": "fe80:0:0:0:0:a:0:b", "::ffff:10.0.0.1": "10.0.0.1", "Example.COM": "Example.COM",
	} {
		if got := javaHostString(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

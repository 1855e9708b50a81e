package jvmorder

import (
	"slices"
	"testing"
)

// The expected orders were printed by OpenJDK 17.

func TestIntSetOrder(t *testing.T) {
	if got := NewIntSetOf([]int32{17, 1, 33, 2}).Values(); !slices.Equal(got, []int32{17, 1, 33, 2}) {
		t.Fatalf("one chain in insertion order: %v", got)
	}
	// Growing past 12 entries doubles the table to 32 buckets.
	s := NewIntSetOf([]int32{5})
	s.AddAll([]int32{100, 36, 4, 68, 20, 52, 84, 116, 132, 148, 164, 180, 196, 3})
	if want := []int32{3, 100, 36, 4, 68, 132, 164, 196, 5, 20, 52, 84, 116, 148, 180}; !slices.Equal(s.Values(), want) {
		t.Fatalf("after resize: %v, want %v", s.Values(), want)
	}
	// Nine entries in one chain resize the table instead of making a tree.
	m := NewHashMap[int32]()
	for _, v := range []int32{0, 64, 128, 192, 256, 320, 384, 448, 512, 576} {
		m.Put(v, v)
	}
	if want := []int32{0, 64, 128, 192, 256, 320, 384, 448, 512, 576}; !slices.Equal(m.Keys(), want) {
		t.Fatalf("long chain: %v", m.Keys())
	}
	if !m.Contains(576, 576) || m.Contains(1, 1) {
		t.Fatal("Contains")
	}
}

func TestStrings(t *testing.T) {
	m := NewHashMap[string]()
	for _, s := range []string{"BB", "Aa", "AaAa", "BBBB", "c", "\U0001F600"} {
		m.Put(s, StringHash(s))
	}
	if want := []string{"BB", "Aa", "c", "\U0001F600", "AaAa", "BBBB"}; !slices.Equal(m.Keys(), want) {
		t.Fatalf("got %q, want %q", m.Keys(), want)
	}
	if StringHash("\U0001F600") != 1772899 || StringHash("Aa") != StringHash("BB") {
		t.Fatal("StringHash")
	}
	// Surrogates sort below U+FB01 in Java, above it in UTF-8.
	if CompareStrings("\U0001F600", "\ufb01") != -8900 || CompareStrings("a", "ab") >= 0 || CompareStrings("b", "a") <= 0 {
		t.Fatal("CompareStrings")
	}
}

// A removed key put again goes to the end of its chain; removals never
// shrink the table, so the order stays that of the largest size reached.
func TestRemove(t *testing.T) {
	m := NewHashMap[int32]()
	for _, v := range []int32{0, 16, 32} {
		m.Put(v, v)
	}
	if !m.Remove(0, 0) || m.Remove(0, 0) || m.Remove(5, 5) {
		t.Fatal("Remove reports")
	}
	m.Put(0, 0)
	if want := []int32{16, 32, 0}; !slices.Equal(m.Keys(), want) {
		t.Fatalf("re-put: %v, want %v", m.Keys(), want)
	}
	for v := int32(1); v <= 10; v++ { // 13 keys: the table grows to 32
		m.Put(v, v)
	}
	for v := int32(1); v <= 10; v++ {
		m.Remove(v, v)
	}
	if want := []int32{32, 0, 16}; !slices.Equal(m.Keys(), want) { // 16, 32, 0 split in two
		t.Fatalf("after growth and removals: %v, want %v", m.Keys(), want)
	}
	if NewHashMap[string]().Remove("a", StringHash("a")) {
		t.Fatal("Remove from an empty map")
	}
}

// The expected orders were printed by Kafka 4.4.0's TimelineHashMap<Integer, ...>
// after putting the ids in the order given.
func TestTimelineIntOrder(t *testing.T) {
	for _, tc := range []struct{ in, want []int32 }{
		{[]int32{1, 2, 3}, []int32{2, 1, 3}},
		{[]int32{4}, []int32{4}},
		{[]int32{101, 102, 103, 104, 105}, []int32{102, 104, 101, 103, 105}},
		{[]int32{5, 9, 13, 17, 21, 25, 29}, []int32{13, 5, 25, 17, 9, 29, 21}},
		{[]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, []int32{0, 5, 10, 2, 7, 12, 4, 9, 1, 6, 11, 3, 8}},
	} {
		if got := TimelineIntOrder(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("TimelineIntOrder(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

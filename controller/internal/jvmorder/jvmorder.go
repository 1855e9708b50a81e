// Package jvmorder reproduces the orders a JVM's collections give where
// Kafka's controller lets them show in its output: the iteration order of a
// java.util.HashMap (or HashSet), and java.lang.String's hash and ordering.
// Kafka's replica placer initializes its racks in HashMap order, drawing
// random numbers as it goes, and its partition change builder lists the
// eligible leader replicas in HashSet order; matching Kafka byte for byte
// needs the same orders.
//
// The emulation is of OpenJDK 17's HashMap: power-of-two tables, a load
// factor of 0.75, chains kept in insertion order (a resize splits each chain
// keeping the order), and a chain of nine entries resizing a table below 64
// buckets. Kafka's collections here hold a handful of entries; a chain that
// long in a table of 64 or more becomes a red-black tree in the JVM, whose
// order this package does not model (it keeps insertion order there).
package jvmorder

import "unicode/utf16"

// StringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... over the
// UTF-16 code units, in 32-bit arithmetic.
func StringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// CompareStrings is java.lang.String.compareTo: by UTF-16 code units, then
// by length. It differs from Go's byte order for characters above U+FFFF
// against those from U+E000 to U+FFFF.
func CompareStrings(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

// HashMap is the iteration order of a java.util.HashMap as keys are put,
// keys being known by their hashCode and an identity (K) for equality.
type HashMap[K comparable] struct {
	buckets [][]entry[K]
	size    int
	// capacity is the table size the first put allocates (HashMap(int)'s
	// threshold before the table exists).
	capacity int
}

type entry[K comparable] struct {
	key  K
	hash int32
}

// NewHashMap is new HashMap<>() (16 buckets once used).
func NewHashMap[K comparable]() *HashMap[K] { return &HashMap[K]{capacity: 16} }

// NewHashMapCap is new HashMap<>(initialCapacity): the table size is the
// next power of two.
func NewHashMapCap[K comparable](initialCapacity int) *HashMap[K] {
	n := 1
	for n < initialCapacity {
		n <<= 1
	}
	return &HashMap[K]{capacity: n}
}

// NewHashSetOf is new HashSet<>(collection) for a collection of n elements
// (OpenJDK 17: an initial capacity of max(n/.75f + 1, 16)); add the
// collection's elements with Put next. From JDK 19 the capacity is
// ceil(max(n, 12)/0.75), which differs when n/0.75 is a power of two (n =
// 12, 24, 48...: 16 buckets for 12, not 32; checked against a JDK 25), so
// a JVM's order then depends on its version.
func NewHashSetOf[K comparable](n int) *HashMap[K] {
	return NewHashMapCap[K](max(int(float32(n)/float32(0.75))+1, 16))
}

// spread is HashMap.hash: the high half folded into the low one.
func spread(h int32) uint32 { return uint32(h) ^ uint32(h)>>16 }

// Put adds key (its hashCode h) if it is not there yet, as HashMap.put does.
func (m *HashMap[K]) Put(key K, h int32) {
	if m.buckets == nil {
		m.buckets = make([][]entry[K], m.capacity)
	}
	i := spread(h) & uint32(len(m.buckets)-1)
	for _, e := range m.buckets[i] {
		if e.key == key {
			return
		}
	}
	m.buckets[i] = append(m.buckets[i], entry[K]{key, h})
	// putVal's treeifyBin, which resizes instead while the table is small.
	if len(m.buckets[i]) > 8 && len(m.buckets) < 64 {
		m.resize()
	}
	m.size++
	if m.size > len(m.buckets)*3/4 {
		m.resize()
	}
}

// Contains reports whether key is in the map.
func (m *HashMap[K]) Contains(key K, h int32) bool {
	if m.buckets == nil {
		return false
	}
	for _, e := range m.buckets[spread(h)&uint32(len(m.buckets)-1)] {
		if e.key == key {
			return true
		}
	}
	return false
}

// Remove takes key out, as HashMap.remove does: the table keeps its size
// and the other keys their order; it reports whether key was there.
func (m *HashMap[K]) Remove(key K, h int32) bool {
	if m.buckets == nil {
		return false
	}
	i := spread(h) & uint32(len(m.buckets)-1)
	for j, e := range m.buckets[i] {
		if e.key == key {
			m.buckets[i] = append(m.buckets[i][:j:j], m.buckets[i][j+1:]...)
			m.size--
			return true
		}
	}
	return false
}

// resize doubles the table; each chain splits in two, keeping its order.
func (m *HashMap[K]) resize() {
	next := make([][]entry[K], 2*len(m.buckets))
	for _, chain := range m.buckets {
		for _, e := range chain {
			j := spread(e.hash) & uint32(len(next)-1)
			next[j] = append(next[j], e)
		}
	}
	m.buckets = next
}

// Keys returns the keys in iteration order.
func (m *HashMap[K]) Keys() []K {
	out := make([]K, 0, m.size)
	for _, chain := range m.buckets {
		for _, e := range chain {
			out = append(out, e.key)
		}
	}
	return out
}

// IntSet is a java.util.HashSet<Integer>: Integer.hashCode is the value.
type IntSet struct{ m *HashMap[int32] }

// NewIntSetOf is new HashSet<>(list).
func NewIntSetOf(list []int32) IntSet {
	s := IntSet{NewHashSetOf[int32](len(list))}
	s.AddAll(list)
	return s
}

// AddAll adds each element in order.
func (s IntSet) AddAll(list []int32) {
	for _, v := range list {
		s.m.Put(v, v)
	}
}

// Values returns the elements in iteration order.
func (s IntSet) Values() []int32 { return s.m.Keys() }

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
// buckets. A chain that long in a table of 64 or more becomes a red-black
// tree in the JVM, whose order this package does not model (it keeps
// insertion order there): only names crafted to share a hash get there,
// and they cost kraftd no more time than others (the maps are keyed by a
// request's users or quota entities, which a client chooses).
package jvmorder

import (
	"cmp"
	"slices"
	"sort"
	"unicode/utf16"
)

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
//
// A HashMap iterates its buckets in index order and each bucket's chain
// in the order its keys were (last) put: a resize splits every chain
// keeping that order, a removal keeps the others'. So the order follows
// from the table size and each live key's latest put, which is all this
// keeps (with each bucket's chain length, which the table size depends on
// while it is small): every operation takes constant time, however many
// keys share a hash, and Keys sorts once.
type HashMap[K comparable] struct {
	keys  map[K]slot
	seq   int64
	table int   // the table size, 0 before the first put
	chain []int // each bucket's chain length, once the table exists
	// capacity is the table size the first put allocates (HashMap(int)'s
	// threshold before the table exists).
	capacity int
}

type slot struct {
	hash int32
	seq  int64 // when the key was last put
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

func (m *HashMap[K]) bucket(h int32) int { return int(spread(h) & uint32(m.table-1)) }

// Put adds key (its hashCode h) if it is not there yet, as HashMap.put does.
func (m *HashMap[K]) Put(key K, h int32) {
	if m.keys == nil {
		m.keys, m.table = map[K]slot{}, m.capacity
		m.chain = make([]int, m.table)
	}
	if _, ok := m.keys[key]; ok {
		return
	}
	m.seq++
	m.keys[key] = slot{hash: h, seq: m.seq}
	i := m.bucket(h)
	m.chain[i]++
	// putVal's treeifyBin, which resizes instead while the table is small.
	if m.chain[i] > 8 && m.table < 64 {
		m.resize()
	}
	if len(m.keys) > m.table*3/4 {
		m.resize()
	}
}

// Contains reports whether key is in the map.
func (m *HashMap[K]) Contains(key K, h int32) bool {
	_, ok := m.keys[key]
	return ok
}

// Remove takes key out, as HashMap.remove does: the table keeps its size
// and the other keys their order; it reports whether key was there.
func (m *HashMap[K]) Remove(key K, h int32) bool {
	s, ok := m.keys[key]
	if !ok {
		return false
	}
	delete(m.keys, key)
	m.chain[m.bucket(s.hash)]--
	return true
}

// resize doubles the table.
func (m *HashMap[K]) resize() {
	m.table *= 2
	m.chain = make([]int, m.table)
	for _, s := range m.keys {
		m.chain[m.bucket(s.hash)]++
	}
}

// Keys returns the keys in iteration order.
func (m *HashMap[K]) Keys() []K {
	out := make([]K, 0, len(m.keys))
	for k := range m.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b K) int {
		sa, sb := m.keys[a], m.keys[b]
		if d := m.bucket(sa.hash) - m.bucket(sb.hash); d != 0 {
			return d
		}
		return cmp.Compare(sa.seq, sb.seq)
	})
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

// TimelineIntOrder is the order a Kafka TimelineHashMap or TimelineHashSet
// keyed by Integer iterates ids (BaseHashTable: open chains in a table of
// at least two slots, doubled before it passes three quarters full, an
// entry's slot the top bits of its hash times -7046029254386353131). The
// table never shrinks, so its size depends on the most entries it ever
// held; it is taken here from the ids it holds now. Ids sharing a slot
// come last given first (a chain is in insertion order, and the iterator
// takes each slot's entries from its end).
func TimelineIntOrder(ids []int32) []int32 {
	slots := 2
	for n := 1; n <= len(ids); n++ {
		if float64(n)*0.75 > float64(slots) {
			slots *= 2
		}
	}
	shift := uint(65 - bitLen(slots))
	slot := func(id int32) uint64 { return uint64(int64(id)*-7046029254386353131) >> shift }
	out := append([]int32(nil), ids...)
	slices.Reverse(out)
	sort.SliceStable(out, func(i, j int) bool { return slot(out[i]) < slot(out[j]) })
	return out
}

// bitLen is 32 - Integer.numberOfLeadingZeros(n) for n > 0.
func bitLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

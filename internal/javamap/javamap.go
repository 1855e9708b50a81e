package javamap

import (
	"sort"
	"unicode/utf16"
)

// GrownCapacity is the table size of a default HashMap (16) after n puts.
func GrownCapacity(n int) int { return Grow(16, n) }

// PresizedCapacity is the table size of new HashMap(size) after n puts: the
// table starts at tableSizeFor(size).
func PresizedCapacity(size, n int) int { return Grow(tableSizeFor(size), n) }

// CopyCapacity is the table size of new HashMap(m) for a map of n entries:
// tableSizeFor(n/0.75 + 1).
func CopyCapacity(n int) int { return tableSizeFor(int(float32(n)/0.75 + 1)) }

func tableSizeFor(n int) int {
	c := 1
	for c < n {
		c *= 2
	}
	return c
}

// Grow is the table size of a HashMap with table size c once it holds n
// entries: it doubles while n exceeds 3/4 of it.
func Grow(c, n int) int {
	for float32(n) > float32(c)*0.75 {
		c *= 2
	}
	return c
}

// StringHash is String.hashCode over UTF-16 code units.
func StringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// IntHash is Integer.hashCode.
func IntHash(i int32) int32 { return i }

// spread is HashMap.hash: the key's hashCode with its high half folded in.
func spread(h int32) uint32 { return uint32(h) ^ uint32(h)>>16 }

// Order returns keys (given in insertion order, without duplicates) in the
// order a HashMap whose table has the given capacity iterates them.
func Order[K any](keys []K, hash func(K) int32, capacity int) []K {
	out := append([]K(nil), keys...)
	mask := uint32(capacity - 1)
	sort.SliceStable(out, func(i, j int) bool {
		return spread(hash(out[i]))&mask < spread(hash(out[j]))&mask
	})
	return out
}

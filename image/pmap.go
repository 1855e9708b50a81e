package image

import (
	"cmp"
	"iter"
)

// pmap is a persistent ordered map: a B-tree whose nodes are shared between
// every version that did not change them. Its header (root and count) is a
// value: copying a pmap is O(1) and the copy is an independent version.
//
// Ownership decides what may be changed in place (the "transient" idea): a
// node belongs to the owner that created it, and a writer holding that owner
// may change it; any other node is copied first, along with the path from the
// root to it. A Builder writes with its own owner and takes a new one each
// time it hands out an Image, so nothing an Image can reach is ever written
// again. No global state, no locks: any number of goroutines may read one
// version, and any number of builders may grow their own versions from it.
//
// Keys are ordered basic types, compared natively (composite keys are
// encoded into integers or strings, keys.go): a comparison through an
// interface method would be an indirect call on the hottest path.
type pmap[K cmp.Ordered, V any] struct {
	root *node[K, V]
	n    int
}

// owner marks the nodes one writer may change in place. It has a size so
// that two owners never share an address.
type owner struct{ _ byte }

func newOwner() *owner { return new(owner) }

// minKeys is the B-tree's minimum degree minus one: every node but the root
// holds minKeys..maxKeys keys. Large nodes keep the per-key overhead small
// (the indexes hold millions of small keys); copying one costs a few hundred
// bytes.
const (
	minKeys = 31
	maxKeys = 2*minKeys + 1
)

type node[K cmp.Ordered, V any] struct {
	own  *owner
	keys []K
	vals []V
	kids []*node[K, V] // nil in a leaf; otherwise len(keys)+1 children
}

func (n *node[K, V]) leaf() bool { return n.kids == nil }

// search returns the index of the first key >= k and whether it equals k.
func (n *node[K, V]) search(k K) (int, bool) {
	lo, hi := 0, len(n.keys)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if n.keys[h] < k {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(n.keys) && n.keys[lo] == k
}

// mut returns n itself when own may change it, else a copy owned by own.
func (n *node[K, V]) mut(own *owner) *node[K, V] {
	if n.own == own {
		return n
	}
	c := &node[K, V]{own: own, keys: clone(n.keys, 1), vals: clone(n.vals, 1)}
	if n.kids != nil {
		c.kids = clone(n.kids, 1)
	}
	return c
}

// clone copies s with room for extra more elements.
func clone[T any](s []T, extra int) []T {
	c := make([]T, len(s), len(s)+extra)
	copy(c, s)
	return c
}

// insertAt inserts v at i, growing by a quarter at most (nodes are many; a
// doubling slice would waste a third of the index memory).
func insertAt[T any](s []T, i int, v T) []T {
	if len(s) == cap(s) {
		g := make([]T, len(s), len(s)+len(s)/4+1)
		copy(g, s)
		s = g
	}
	s = s[:len(s)+1]
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func removeAt[T any](s []T, i int) []T {
	copy(s[i:], s[i+1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}

func (m *pmap[K, V]) len() int { return m.n }

func (m *pmap[K, V]) get(k K) (V, bool) {
	for n := m.root; n != nil; {
		i, found := n.search(k)
		if found {
			return n.vals[i], true
		}
		if n.leaf() {
			break
		}
		n = n.kids[i]
	}
	var zero V
	return zero, false
}

func (m *pmap[K, V]) has(k K) bool {
	_, ok := m.get(k)
	return ok
}

// ref returns a pointer to k's value for changing it in place, copying the
// path to it first where own does not own it; nil when k is absent. The
// pointer is good until the next change to m.
func (m *pmap[K, V]) ref(own *owner, k K) *V {
	if !m.has(k) {
		return nil
	}
	m.root = m.root.mut(own)
	for n := m.root; ; {
		i, found := n.search(k)
		if found {
			return &n.vals[i]
		}
		n.kids[i] = n.kids[i].mut(own)
		n = n.kids[i]
	}
}

// set maps k to v, changing only nodes own may change (copying the others).
func (m *pmap[K, V]) set(own *owner, k K, v V) {
	if m.root == nil {
		m.root = &node[K, V]{own: own, keys: []K{k}, vals: []V{v}}
		m.n = 1
		return
	}
	root := m.root.mut(own)
	if len(root.keys) == maxKeys {
		root = &node[K, V]{own: own, kids: []*node[K, V]{root}}
		root.splitChild(own, 0)
	}
	m.root = root
	if root.insert(own, k, v) {
		m.n++
	}
}

// insert puts k into the subtree of n (owned, not full); true if k is new.
func (n *node[K, V]) insert(own *owner, k K, v V) bool {
	for {
		i, found := n.search(k)
		if found {
			n.vals[i] = v
			return false
		}
		if n.leaf() {
			n.keys = insertAt(n.keys, i, k)
			n.vals = insertAt(n.vals, i, v)
			return true
		}
		if len(n.kids[i].keys) == maxKeys {
			n.splitChild(own, i)
			switch {
			case k == n.keys[i]:
				n.vals[i] = v
				return false
			case k > n.keys[i]:
				i++
			}
		}
		n.kids[i] = n.kids[i].mut(own)
		n = n.kids[i]
	}
}

// splitChild splits the full child i of n (owned) around its median, which
// moves up into n.
func (n *node[K, V]) splitChild(own *owner, i int) {
	c := n.kids[i]
	right := &node[K, V]{
		own:  own,
		keys: clone(c.keys[minKeys+1:], 1),
		vals: clone(c.vals[minKeys+1:], 1),
	}
	left := &node[K, V]{
		own:  own,
		keys: clone(c.keys[:minKeys], 1),
		vals: clone(c.vals[:minKeys], 1),
	}
	if !c.leaf() {
		right.kids = clone(c.kids[minKeys+1:], 1)
		left.kids = clone(c.kids[:minKeys+1], 1)
	}
	n.keys = insertAt(n.keys, i, c.keys[minKeys])
	n.vals = insertAt(n.vals, i, c.vals[minKeys])
	n.kids[i] = left
	n.kids = insertAt(n.kids, i+1, right)
}

// delete removes k; it returns the value it had.
func (m *pmap[K, V]) delete(own *owner, k K) (V, bool) {
	old, ok := m.get(k)
	if !ok {
		return old, false
	}
	root := m.root.mut(own)
	root.remove(own, k)
	switch {
	case len(root.keys) > 0:
		m.root = root
	case root.leaf():
		m.root = nil
	default:
		m.root = root.kids[0]
	}
	m.n--
	return old, true
}

// remove deletes k (present) from the subtree of n, which is owned and, unless
// it is the root, holds more than minKeys keys.
func (n *node[K, V]) remove(own *owner, k K) {
	for {
		i, found := n.search(k)
		if n.leaf() {
			n.keys = removeAt(n.keys, i)
			n.vals = removeAt(n.vals, i)
			return
		}
		if found {
			switch {
			case len(n.kids[i].keys) > minKeys:
				// Replace k by its predecessor, then delete that below.
				c := n.kids[i].mut(own)
				n.kids[i] = c
				pk, pv := c.max()
				n.keys[i], n.vals[i] = pk, pv
				n, k = c, pk
			case len(n.kids[i+1].keys) > minKeys:
				c := n.kids[i+1].mut(own)
				n.kids[i+1] = c
				sk, sv := c.min()
				n.keys[i], n.vals[i] = sk, sv
				n, k = c, sk
			default:
				n.merge(own, i)
				n = n.kids[i]
			}
			continue
		}
		n = n.fill(own, i)
	}
}

// fill makes child i of n hold more than minKeys keys, borrowing from a
// sibling or merging with one, and returns the (owned) child to descend into.
func (n *node[K, V]) fill(own *owner, i int) *node[K, V] {
	if len(n.kids[i].keys) > minKeys {
		n.kids[i] = n.kids[i].mut(own)
		return n.kids[i]
	}
	switch {
	case i > 0 && len(n.kids[i-1].keys) > minKeys:
		l, c := n.kids[i-1].mut(own), n.kids[i].mut(own)
		n.kids[i-1], n.kids[i] = l, c
		last := len(l.keys) - 1
		c.keys = insertAt(c.keys, 0, n.keys[i-1])
		c.vals = insertAt(c.vals, 0, n.vals[i-1])
		n.keys[i-1], n.vals[i-1] = l.keys[last], l.vals[last]
		l.keys, l.vals = removeAt(l.keys, last), removeAt(l.vals, last)
		if !l.leaf() {
			c.kids = insertAt(c.kids, 0, l.kids[len(l.kids)-1])
			l.kids = removeAt(l.kids, len(l.kids)-1)
		}
		return c
	case i < len(n.keys) && len(n.kids[i+1].keys) > minKeys:
		c, r := n.kids[i].mut(own), n.kids[i+1].mut(own)
		n.kids[i], n.kids[i+1] = c, r
		c.keys = append(c.keys, n.keys[i])
		c.vals = append(c.vals, n.vals[i])
		n.keys[i], n.vals[i] = r.keys[0], r.vals[0]
		r.keys, r.vals = removeAt(r.keys, 0), removeAt(r.vals, 0)
		if !r.leaf() {
			c.kids = append(c.kids, r.kids[0])
			r.kids = removeAt(r.kids, 0)
		}
		return c
	case i < len(n.keys):
		n.merge(own, i)
		return n.kids[i]
	default:
		n.merge(own, i-1)
		return n.kids[i-1]
	}
}

// merge joins child i, key i and child i+1 of n into one owned child i.
func (n *node[K, V]) merge(own *owner, i int) {
	l, r := n.kids[i], n.kids[i+1]
	m := &node[K, V]{own: own}
	m.keys = make([]K, 0, len(l.keys)+1+len(r.keys))
	m.keys = append(append(append(m.keys, l.keys...), n.keys[i]), r.keys...)
	m.vals = make([]V, 0, len(l.vals)+1+len(r.vals))
	m.vals = append(append(append(m.vals, l.vals...), n.vals[i]), r.vals...)
	if !l.leaf() {
		m.kids = make([]*node[K, V], 0, len(l.kids)+len(r.kids))
		m.kids = append(append(m.kids, l.kids...), r.kids...)
	}
	n.keys, n.vals = removeAt(n.keys, i), removeAt(n.vals, i)
	n.kids = removeAt(n.kids, i+1)
	n.kids[i] = m
}

func (n *node[K, V]) max() (K, V) {
	for !n.leaf() {
		n = n.kids[len(n.kids)-1]
	}
	return n.keys[len(n.keys)-1], n.vals[len(n.vals)-1]
}

func (n *node[K, V]) min() (K, V) {
	for !n.leaf() {
		n = n.kids[0]
	}
	return n.keys[0], n.vals[0]
}

// all yields every entry in key order.
func (m *pmap[K, V]) all() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root != nil {
			m.root.ascend(nil, yield)
		}
	}
}

// from yields the entries whose key is >= k, in key order; the caller stops
// when it leaves the range it wants.
func (m *pmap[K, V]) from(k K) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root != nil {
			m.root.ascend(&k, yield)
		}
	}
}

func (n *node[K, V]) ascend(from *K, yield func(K, V) bool) bool {
	i := 0
	if from != nil {
		i, _ = n.search(*from)
	}
	for ; i < len(n.keys); i++ {
		if !n.leaf() && !n.kids[i].ascend(from, yield) {
			return false
		}
		from = nil // everything right of the first key is in range
		if !yield(n.keys[i], n.vals[i]) {
			return false
		}
	}
	if !n.leaf() {
		return n.kids[i].ascend(from, yield)
	}
	return true
}

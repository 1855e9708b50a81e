package image

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

type intKey int

// check walks the tree and fails on a broken B-tree invariant: key order,
// node fill, children counts and equal leaf depth.
func (m *pmap[K, V]) check(t *testing.T) {
	t.Helper()
	if m.root == nil {
		if m.n != 0 {
			t.Fatalf("empty tree counts %d", m.n)
		}
		return
	}
	count, depth := 0, -1
	var walk func(n *node[K, V], d int, root bool)
	walk = func(n *node[K, V], d int, root bool) {
		if len(n.keys) != len(n.vals) || len(n.keys) > maxKeys || (!root && len(n.keys) < minKeys) || len(n.keys) == 0 {
			t.Fatalf("node with %d keys, %d values (root %v)", len(n.keys), len(n.vals), root)
		}
		for i := 1; i < len(n.keys); i++ {
			if n.keys[i-1] >= n.keys[i] {
				t.Fatalf("keys out of order")
			}
		}
		count += len(n.keys)
		if n.leaf() {
			if depth >= 0 && depth != d {
				t.Fatalf("leaves at depths %d and %d", depth, d)
			}
			depth = d
			return
		}
		if len(n.kids) != len(n.keys)+1 {
			t.Fatalf("%d keys, %d children", len(n.keys), len(n.kids))
		}
		for _, c := range n.kids {
			walk(c, d+1, false)
		}
	}
	walk(m.root, 0, true)
	if count != m.n {
		t.Fatalf("tree holds %d keys, counts %d", count, m.n)
	}
}

func toMap(m *pmap[intKey, int]) map[intKey]int {
	out := map[intKey]int{}
	for k, v := range m.all() {
		out[k] = v
	}
	return out
}

// TestPmapModel: random sets and deletes agree with a Go map, iteration is
// ordered, and every earlier version stays exactly as it was although later
// versions grew from it (persistence), whichever version a writer starts from.
func TestPmapModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type version struct {
		m     pmap[intKey, int]
		model map[intKey]int
	}
	var versions []version
	cur, model := pmap[intKey, int]{}, map[intKey]int{}
	own := newOwner()
	for step := range 80000 {
		k := intKey(r.IntN(20000))
		if r.IntN(10) == 0 {
			// Change a value in place through ref.
			p := cur.ref(own, k)
			if _, had := model[k]; had != (p != nil) {
				t.Fatalf("step %d: ref %d = %v; model has %v", step, k, p, had)
			}
			if p != nil {
				*p = -step
				model[k] = -step
			}
		} else if r.IntN(3) == 0 {
			_, had := model[k]
			old, ok := cur.delete(own, k)
			if ok != had || (had && old != model[k]) {
				t.Fatalf("step %d: delete %d = %d,%v; model has %v", step, k, old, ok, had)
			}
			delete(model, k)
		} else {
			cur.set(own, k, step)
			model[k] = step
		}
		if step%2000 == 0 {
			cur.check(t)
			versions = append(versions, version{cur, maps.Clone(model)})
			own = newOwner() // the kept version is frozen
			if r.IntN(2) == 0 {
				// Grow the next versions from an older one, as a second builder would.
				v := versions[r.IntN(len(versions))]
				cur, model = v.m, maps.Clone(v.model)
			}
		}
	}
	cur.check(t)
	for i, v := range versions {
		v.m.check(t)
		if got := toMap(&v.m); !maps.Equal(got, v.model) {
			t.Fatalf("version %d changed after it was frozen: %d keys, want %d", i, len(got), len(v.model))
		}
		keys := slices.Collect(func(yield func(intKey) bool) {
			for k := range v.m.all() {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.IsSorted(keys) || len(keys) != v.m.len() {
			t.Fatalf("version %d iterates %d keys, unsorted or miscounted", i, len(keys))
		}
	}
	for k, v := range model {
		if got, ok := cur.get(k); !ok || got != v {
			t.Fatalf("get %d = %d,%v, want %d", k, got, ok, v)
		}
	}
}

// TestPmapFrom: a range scan starts at the first key >= its bound, at every
// bound and tree shape, and stops when told to.
func TestPmapFrom(t *testing.T) {
	own := newOwner()
	var m pmap[intKey, int]
	for i := 0; i < 5000; i += 2 {
		m.set(own, intKey(i), i)
	}
	for _, from := range []int{-1, 0, 1, 2, 63, 64, 65, 1001, 4998, 4999, 6000} {
		want := max(0, from+from%2)
		n := 0
		for k := range m.from(intKey(from)) {
			if int(k) != want {
				t.Fatalf("from %d: got %d, want %d", from, k, want)
			}
			want += 2
			if n++; n == 100 {
				break
			}
		}
		if want < 5000 && n < 100 {
			t.Fatalf("from %d: stopped early at %d", from, want)
		}
	}
}

package image

import (
	"cmp"
	"encoding/binary"
	"strings"

	"github.com/kraftd/kraftd/uuid"
)

// The key types of the image's maps. Each orders its values totally; the
// composite ones order field by field, so a map keyed by them can be scanned
// by prefix (a broker's ISR entries, a resource's configs).

type i32 int32

func (a i32) compare(b i32) int { return cmp.Compare(a, b) }

type u32 uint32

func (a u32) compare(b u32) int { return cmp.Compare(a, b) }

type str string

func (a str) compare(b str) int { return strings.Compare(string(a), string(b)) }

type id uuid.UUID

func (a id) compare(b id) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:]))
}

// isrKey is one (broker, partition) entry of the ISR and ELR indexes; the
// topic is its ordinal (Topic.ord), four bytes instead of a sixteen-byte id,
// because these indexes hold a few entries per partition.
type isrKey struct {
	broker int32
	ord    uint32
	part   int32
}

func (a isrKey) compare(b isrKey) int {
	if c := cmp.Compare(a.broker, b.broker); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ord, b.ord); c != 0 {
		return c
	}
	return cmp.Compare(a.part, b.part)
}

// tpKey is a partition in the per-partition indexes.
type tpKey struct {
	ord  uint32
	part int32
}

func (a tpKey) compare(b tpKey) int {
	if c := cmp.Compare(a.ord, b.ord); c != 0 {
		return c
	}
	return cmp.Compare(a.part, b.part)
}

// configKey is one configuration entry: resource type and name, then key.
type configKey struct {
	typ  int8
	res  string
	name string
}

func (a configKey) compare(b configKey) int {
	if c := cmp.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	if c := strings.Compare(a.res, b.res); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// quotaKey is one client quota: the entity (encoded, entityKey) and the key.
type quotaKey struct {
	entity string
	key    string
}

func (a quotaKey) compare(b quotaKey) int {
	if c := strings.Compare(a.entity, b.entity); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// scramKey is one SCRAM credential: mechanism, then user.
type scramKey struct {
	mech int8
	name string
}

func (a scramKey) compare(b scramKey) int {
	if c := cmp.Compare(a.mech, b.mech); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// pairKey is a pair of strings: a topic name under its collision-normalized
// form.
type pairKey struct{ a, b string }

func (x pairKey) compare(y pairKey) int {
	if c := strings.Compare(x.a, y.a); c != 0 {
		return c
	}
	return strings.Compare(x.b, y.b)
}

// appendString appends s with its length in front, so that a sequence of
// strings encodes unambiguously (names may hold any byte).
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// readString undoes appendString on an encoding this package made.
func readString(b []byte) (string, []byte) {
	n, k := binary.Uvarint(b)
	b = b[k:]
	return string(b[:n]), b[n:]
}

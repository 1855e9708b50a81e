package image

import (
	"encoding/binary"

	"github.com/kraftd/kraftd/uuid"
)

// The image's maps take ordered basic keys; composite keys are encoded here.
// Integers pack fields high to low; strings put a length before every field
// but the last, so that keys sharing their leading fields share a prefix and
// a map can be scanned by it (a resource's configs, a name's collisions).

// idKey is a uuid as a map key: its 16 bytes.
func idKey(u uuid.UUID) string { return string(u[:]) }

// partKey is a partition in the indexes: the topic's ordinal (Topic.ord,
// four bytes where its id takes sixteen) and the partition id.
func partKey(ord uint32, part int32) uint64 { return uint64(ord)<<32 | uint64(uint32(part)) }

func splitPartKey(k uint64) (uint32, int32) { return uint32(k >> 32), int32(uint32(k)) }

// appendString appends s with its length in front.
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// readString undoes appendString on a key this package encoded.
func readString(b []byte) (string, []byte) {
	n, k := binary.Uvarint(b)
	b = b[k:]
	return string(b[:n]), b[n:]
}

// configKey is one configuration entry: resource type, resource name, key.
func configKey(typ int8, res, name string) string {
	return string(append(configPrefix(typ, res), name...))
}

// configPrefix is what the keys of one resource start with.
func configPrefix(typ int8, res string) []byte {
	return appendString([]byte{byte(typ)}, res)
}

func splitConfigKey(k string) (typ int8, res, name string) {
	res, rest := readString([]byte(k[1:]))
	return int8(k[0]), res, string(rest)
}

// quotaKey is one client quota: the entity (entityKey) and the quota key.
func quotaKey(entity, key string) string {
	return string(append(appendString(nil, entity), key...))
}

func splitQuotaKey(k string) (entity, key string) {
	entity, rest := readString([]byte(k))
	return entity, string(rest)
}

// scramKey is one SCRAM credential: mechanism, then user.
func scramKey(mech int8, user string) string { return string(append([]byte{byte(mech)}, user...)) }

// collisionKey is a topic name under its collision form.
func collisionKey(form, name string) string {
	return string(append(appendString(nil, form), name...))
}

// Package uuid is Kafka's Uuid: 16 bytes rendered as 22 base64url
// characters without padding, for cluster, directory and topic ids. Random
// draws a version-4 uuid and redraws, as Kafka's Uuid.randomUuid does, the
// reserved ids (zero, Uuid(0,1)) and any id whose text starts with '-';
// RandomDirectoryID also skips the 100 ids Kafka's DirectoryId reserves.
//
// It is a leaf (standard library only), so the metadata log, the raft core
// and the storage tooling share one type and one rendering. Its errors
// start with "uuid: ".
package uuid

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// UUID is a Kafka Uuid: 16 bytes (most significant long first), written as 22
// base64url characters without padding. Cluster ids, directory ids and topic
// ids all use it.
type UUID [16]byte

// Reserved ids (Kafka's Uuid.ZERO_UUID, and Uuid.ONE_UUID =
// METADATA_TOPIC_ID = DirectoryId.UNASSIGNED): __cluster_metadata's topic id is
// the one every node knows without being told.
var (
	Zero            UUID
	MetadataTopicID = UUID{15: 1}
)

// String renders u the way Kafka's Uuid.toString does.
func (u UUID) String() string {
	return base64.RawURLEncoding.EncodeToString(u[:])
}

// IsZero reports whether u is the zero uuid (Kafka's "no id").
func (u UUID) IsZero() bool { return u == Zero }

// msb and lsb are Kafka's two halves of the uuid.
func (u UUID) msb() uint64 { return binary.BigEndian.Uint64(u[:8]) }
func (u UUID) lsb() uint64 { return binary.BigEndian.Uint64(u[8:]) }

// Reserved reports whether u is in Kafka's Uuid.RESERVED: never returned
// by Uuid.randomUuid, never a cluster id.
func (u UUID) Reserved() bool { return u == Zero || u == MetadataTopicID }

// ReservedDirectoryID reports whether u is one of the first 100 uuids, which
// Kafka's DirectoryId reserves (MIGRATING, UNASSIGNED, LOST, ...) and refuses
// in meta.properties.
func ReservedDirectoryID(u UUID) bool { return u.msb() == 0 && u.lsb() < 100 }

// Random returns a fresh id as Kafka's Uuid.randomUuid does: a version-4
// uuid from crypto/rand, redrawn while it is reserved or its text starts with
// '-' (such ids would be taken for command-line flags).
func Random() UUID {
	u, err := RandomFrom(rand.Reader)
	if err != nil {
		// crypto/rand.Read never fails on supported platforms (it panics
		// itself where it cannot); this is a broken invariant.
		panic(fmt.Sprintf("uuid: crypto/rand: %v", err))
	}
	return u
}

// RandomFrom is Random drawing bytes from r (tests pass a deterministic
// reader).
func RandomFrom(r io.Reader) (UUID, error) {
	for {
		var u UUID
		if _, err := io.ReadFull(r, u[:]); err != nil {
			return Zero, fmt.Errorf("uuid: random uuid: %w", err)
		}
		// Version 4 and the IETF variant, as java.util.UUID.randomUUID sets.
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		if u.Reserved() || strings.HasPrefix(u.String(), "-") {
			continue
		}
		return u, nil
	}
}

// RandomDirectoryID returns a fresh directory id as Kafka's DirectoryId.random
// does: a Random uuid that is also not among the reserved first 100.
func RandomDirectoryID() UUID {
	for {
		if u := Random(); !ReservedDirectoryID(u) {
			return u
		}
	}
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Parse decodes a uuid in Kafka's text form: 22 base64url characters, as
// Uuid.toString writes them. Kafka's Uuid.fromString also takes the padded
// 24-character form ("==" appended), so Parse does too. Like Java's decoder,
// Parse ignores the 4 unused low bits of the last character.
func Parse(s string) (UUID, error) {
	text := s
	if len(text) == 24 && strings.HasSuffix(text, "==") {
		text = text[:22]
	}
	if len(text) != 22 {
		return Zero, fmt.Errorf("uuid: a uuid must be 22 base64url characters, got %d in %q", len(s), clip(s))
	}
	for i := 0; i < len(text); i++ {
		if strings.IndexByte(base64URLAlphabet, text[i]) < 0 {
			return Zero, fmt.Errorf("uuid: a uuid must be 22 base64url characters, got %q at position %d in %q", text[i], i, clip(s))
		}
	}
	var u UUID
	n, err := base64.RawURLEncoding.Decode(u[:], []byte(text))
	if err != nil || n != 16 {
		// Unreachable after the checks above; kept so a decoder change
		// cannot turn into a silent partial id.
		return Zero, fmt.Errorf("uuid: decode uuid %q: %v (%d bytes)", clip(s), err, n)
	}
	return u, nil
}

// clip keeps error messages bounded for hostile input.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

package clusterid

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Kafka's format emits two things in java.util.HashMap iteration order: the
// voters of the bootstrap Voters record (VoterSet keeps a HashMap<Integer>)
// and the dirs it formats (MetaPropertiesEnsemble.Copier writes a
// HashMap<String>). To stay byte- and line-identical, format reproduces that
// order: a HashMap iterates its table buckets in index order and each
// bucket's entries in insertion order (treeified buckets need 8 colliding
// keys, which a handful of ids or dirs never reach).

// javaHashMapCapacity is the table size of a HashMap that grew from the
// default 16 by doubling while n entries exceed 3/4 of it.
func javaHashMapCapacity(n int) int {
	c := 16
	for n > c*3/4 {
		c *= 2
	}
	return c
}

// javaCopyCapacity is the table size of new HashMap(m) for a map of n
// entries: tableSizeFor(n/0.75 + 1).
func javaCopyCapacity(n int) int {
	t := int(float32(n)/0.75 + 1)
	c := 1
	for c < t {
		c *= 2
	}
	return c
}

// javaSpread is HashMap.hash: the key's hashCode with its high half folded in.
func javaSpread(h int32) uint32 { return uint32(h) ^ uint32(h)>>16 }

// javaStringHash is String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaIterationOrder sorts keys (given in insertion order) into the order a
// HashMap with the given capacity iterates them.
func javaIterationOrder[K any](keys []K, hash func(K) int32, capacity int) []K {
	out := append([]K(nil), keys...)
	sort.SliceStable(out, func(i, j int) bool {
		return javaSpread(hash(out[i]))&uint32(capacity-1) < javaSpread(hash(out[j]))&uint32(capacity-1)
	})
	return out
}

// votersInKafkaOrder orders voters as VoterSet.toVotersRecord does: ids put
// in ascending order into a HashMap (DynamicVoters.toVoterSet), which
// VoterSet.fromMap then copies.
func votersInKafkaOrder(voters []InitialController) []InitialController {
	sorted := append([]InitialController(nil), voters...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].NodeID < sorted[j].NodeID })
	id := func(c InitialController) int32 { return c.NodeID }
	built := javaIterationOrder(sorted, id, javaHashMapCapacity(len(sorted)))
	return javaIterationOrder(built, id, javaCopyCapacity(len(sorted)))
}

// dirsInKafkaOrder orders the dirs to format as the Copier writes them:
// entries put into a default HashMap<String> in sorted order (ties within a
// bucket keep that order).
func dirsInKafkaOrder(dirs []string) []string {
	sorted := append([]string(nil), dirs...)
	sort.Strings(sorted)
	return javaIterationOrder(sorted, javaStringHash, javaHashMapCapacity(len(sorted)))
}

// javaHostString is the host an InetSocketAddress(host, port) reports, which
// Kafka stores in the Voters record: IP literals in Java's own rendering
// (IPv6 as eight uncompressed groups, IPv4-mapped IPv6 as IPv4), names as
// given.
func javaHostString(host string) string {
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = strconv.FormatUint(uint64(ip[2*i])<<8|uint64(ip[2*i+1]), 16)
	}
	return strings.Join(groups, ":")
}

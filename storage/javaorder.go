package storage

import (
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/kraftd/kraftd/internal/javamap"
)

// Kafka's format emits two things in java.util.HashMap iteration order (see
// package javamap): the voters of the bootstrap Voters record (VoterSet
// keeps a HashMap<Integer>) and the dirs it formats
// (MetaPropertiesEnsemble.Copier writes a HashMap<String>). format
// reproduces that order to stay byte- and line-identical.

// votersInKafkaOrder orders voters as VoterSet.toVotersRecord does: ids put
// in ascending order into a HashMap (DynamicVoters.toVoterSet), which
// VoterSet.fromMap then copies.
func votersInKafkaOrder(voters []InitialController) []InitialController {
	sorted := append([]InitialController(nil), voters...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].NodeID < sorted[j].NodeID })
	id := func(c InitialController) int32 { return javamap.IntHash(c.NodeID) }
	built := javamap.Order(sorted, id, javamap.GrownCapacity(len(sorted)))
	return javamap.Order(built, id, javamap.CopyCapacity(len(sorted)))
}

// dirsInKafkaOrder orders the dirs to format as the Copier writes them:
// entries put into a default HashMap<String> in sorted order (ties within a
// bucket keep that order).
func dirsInKafkaOrder(dirs []string) []string {
	sorted := append([]string(nil), dirs...)
	sort.Strings(sorted)
	return javamap.Order(sorted, javamap.StringHash, javamap.GrownCapacity(len(sorted)))
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

// Package javamap reproduces java.util.HashMap's iteration order, so kraftd
// can emit what Kafka emits from a HashMap byte for byte and word for word:
// the voters of a bootstrap Voters record, the dirs format writes, the
// endpoints in an AddRaftVoter refusal.
//
// A HashMap iterates its table buckets in index order and each bucket's
// entries in insertion order; a resize splits every bucket keeping that
// order, so the final order depends only on the final table size. Buckets
// are treeified only at 8 colliding keys, which the handful of ids, dirs or
// listeners kraftd orders never reach.
package javamap

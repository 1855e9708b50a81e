// Package image is the cluster metadata image: the state a Kafka controller
// or broker replays from a snapshot plus the committed __cluster_metadata
// log (Kafka's MetadataImage, MetadataDelta and the replay half of its
// controller managers), with the indexes a controller keeps beside it.
//
// An Image is immutable and cheap to keep many of: its maps are persistent
// B-trees (pmap) that share every node a later image did not change. A
// Builder replays records onto an image, checking what a Kafka 4.4 standby
// controller checks, and hands out the next image in O(1). The Loader sits
// on raft's committed batches and snapshots, handles metadata transactions
// and the bootstrap snapshot, and publishes images at batch ends. Write
// emits an image as a snapshot's records. The package is deterministic: no
// I/O, no clock, no goroutines.
//
// See docs/design/image.md for the model, the replay checks, the memory
// layout and its figures.
package image

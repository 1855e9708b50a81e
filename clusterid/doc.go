// Package clusterid holds a node's identity on disk: Kafka uuids (cluster,
// directory and topic ids), meta.properties, and the logic of the
// `kafka-storage`-compatible commands `random-uuid`, `format` and `info`.
//
// Ids are Kafka Uuids: 16 bytes rendered as 22 base64url characters without
// padding. Random draws a version-4 uuid and redraws, as Kafka's
// Uuid.randomUuid does, the reserved ids (zero, Uuid(0,1)) and any id whose
// text starts with '-'; uuid.RandomDirectoryID also skips the 100 ids Kafka's
// DirectoryId reserves.
//
// meta.properties (Java Properties text) is read with ReadMetaProperties and
// written atomically (meta.properties.tmp, fsync, rename, dir fsync) with
// WriteMetaProperties. Version 1 (KRaft) requires cluster.id and node.id.
//
// Commands, for cmd/controller:
//
//	random-uuid:  fmt.Println(clusterid.Random())
//	format:       err := clusterid.Format(clusterid.FormatOptions{
//	                  Dirs: logDirs, MetadataDir: metadataLogDir,
//	                  ClusterID: id, NodeID: nodeID, IgnoreFormatted: ignore,
//	                  DynamicQuorum: len(voters) == 0, InitialControllers: ics,
//	                  ControllerListener: listener, Out: os.Stdout})
//	info:         text, err := clusterid.Info(dirs) // print text; exit 1 if err != nil
//	start-up:     node, err := clusterid.Load(logDirs, metadataLogDir, nodeID)
//	              // node.ClusterID, node.DirectoryID (raft replica directory id)
//
// Format does what Kafka 4.4's kafka-storage format does, with its checks,
// order and messages (features.go holds its metadata.version and feature
// tables). It refuses an already formatted dir unless IgnoreFormatted, and
// refuses dirs formatted with another cluster id or node id in any case. It
// prints the bootstrap records, then for each new dir writes, for a
// controller's metadata dir, the bootstrap snapshot
// __cluster_metadata-0/00000000000000000000-0000000000.checkpoint (Kafka
// 4.4's bootstrap: a control batch with the SnapshotHeader and, for
// kraft.version 1, the KRaftVersion and Voters records, then the
// FeatureLevelRecords, then a footer, as RecordsSnapshotWriter writes them),
// and last meta.properties v1, so a crash mid-format leaves the dir looking
// unformatted. kraft.version is 1 exactly when controller.quorum.voters is
// empty (DynamicQuorum); InitialControllers (ParseInitialControllers parses
// --initial-controllers; --standalone is one entry for the node itself with
// uuid.RandomDirectoryID) fills the Voters record and gives a voter's metadata
// dir its directory id. Voters and dirs come in the order Kafka's HashMaps
// give them (javaorder.go), so the bytes and lines match Kafka's.
//
// Every file is read and written through vfs.FS (FormatOptions.FS, LoadFS,
// InfoFS; nil = the OS) and every write is vfs.WriteFileAtomic, so the
// tests format on vfs.MemFS and check the power-loss image after every
// single file-system operation, and run format under faultfs.FS (full
// disk, fsync errors).
//
// Load makes the start-up checks Kafka makes: every dir formatted, one
// cluster.id and node.id across dirs (errors name both files), node.id equal
// to the configured one, directory ids valid and distinct; a missing
// directory.id is generated and written back.
package clusterid

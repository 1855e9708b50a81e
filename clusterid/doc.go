// Package clusterid holds a node's identity on disk: Kafka uuids (cluster,
// directory and topic ids), meta.properties, and the logic of the
// `kafka-storage`-compatible commands `random-uuid`, `format` and `info`.
//
// Ids are Kafka Uuids: 16 bytes rendered as 22 base64url characters without
// padding. Random draws a version-4 uuid and redraws, as Kafka's
// Uuid.randomUuid does, the reserved ids (zero, Uuid(0,1)) and any id whose
// text starts with '-'; RandomDirectoryID also skips the 100 ids Kafka's
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
//	                  ClusterID: id, NodeID: nodeID,
//	                  IgnoreFormatted: ignore, Out: os.Stdout})
//	info:         text, err := clusterid.Info(dirs) // print text; exit 1 if err != nil
//	start-up:     node, err := clusterid.Load(logDirs, metadataLogDir, nodeID)
//	              // node.ClusterID, node.DirectoryID (raft replica directory id)
//
// Format refuses an already formatted dir unless IgnoreFormatted, and refuses
// dirs formatted with another cluster id or node id in any case. For each new
// dir it writes bootstrap.checkpoint (a header control batch, one batch of
// FeatureLevelRecords for metadata.version and the requested features, a
// footer control batch, as Kafka's BatchFileWriter does), then
// meta.properties v1 with a fresh directory.id, so a crash mid-format leaves
// the dir looking unformatted. The raft log itself needs no bootstrap state
// for static voter sets. For a dynamic quorum (kraft.version 1), set
// InitialControllers (ParseInitialControllers parses --initial-controllers;
// --standalone is one entry for the node itself with RandomDirectoryID) and
// ControllerListener: the metadata dir then also gets the bootstrap snapshot
// __cluster_metadata-0/00000000000000000000-0000000000.checkpoint (header,
// KRaftVersion 1 and Voters records in one control batch, then a footer, as
// Kafka's RecordsSnapshotWriter writes it) and, when the node is one of the
// voters, that voter's directory id.
//
// Every file is read and written through vfs.FS (FormatOptions.FS, LoadFS,
// InfoFS; nil = the OS) and every write is vfs.WriteFileAtomic, so the
// tests format on vfs.MemFS and check the power-loss image after every
// single file-system operation, and run format under vfs.FaultFS (full
// disk, fsync errors).
//
// Load makes the start-up checks Kafka makes: every dir formatted, one
// cluster.id and node.id across dirs (errors name both files), node.id equal
// to the configured one, directory ids valid and distinct; a missing
// directory.id is generated and written back.
package clusterid

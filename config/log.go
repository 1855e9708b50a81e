package config

import (
	"path/filepath"
	"strings"

	"github.com/kraftd/kraftd/metadatalog"
)

// The keys of the log directories, which tools read too.
const (
	LogDirsKey        = "log.dirs"
	LogDirKey         = "log.dir"
	MetadataLogDirKey = "metadata.log.dir"
)

// logKeys are the keys of the log directories and the metadata log.
var logKeys = []string{
	LogDirsKey, LogDirKey, MetadataLogDirKey,
	"metadata.log.segment.bytes", "metadata.log.segment.min.bytes", "metadata.log.segment.ms",
	"metadata.max.retention.bytes", "metadata.max.retention.ms",
	"metadata.log.max.record.bytes.between.snapshots", "metadata.log.max.snapshot.interval.ms",
}

// Kafka's defaults (KRaftConfigs, ServerLogConfigs) of the keys only config
// reads; the metadata log's own are metadatalog's.
const (
	defaultLogDirs             = "/tmp/kafka-logs"
	defaultMaxRecordBytesSnap  = 20 << 20
	defaultMaxSnapshotInterval = 3600 * 1000
)

// readLog reads the log directories, segment, retention and snapshot
// settings.
func (c *Config) readLog(r *reader) {
	c.readLogDirs(r)
	c.SegmentMinBytes = r.int("metadata.log.segment.min.bytes", metadatalog.DefaultSegmentMinBytes, 12)
	c.SegmentBytes = r.int("metadata.log.segment.bytes", metadatalog.DefaultSegmentBytes, 12)
	if c.SegmentBytes < c.SegmentMinBytes {
		r.bad("metadata.log.segment.bytes: %d is below metadata.log.segment.min.bytes (%d)", c.SegmentBytes, c.SegmentMinBytes)
	}
	if c.SegmentBytes > 1<<31-1 {
		r.bad("metadata.log.segment.bytes: %d is larger than an int", c.SegmentBytes)
	}
	c.SegmentMs = r.int("metadata.log.segment.ms", metadatalog.DefaultSegmentMs, 1)
	c.MaxRetentionBytes = r.int("metadata.max.retention.bytes", metadatalog.DefaultRetentionBytes, -1<<62)
	c.MaxRetentionMs = r.int("metadata.max.retention.ms", metadatalog.DefaultRetentionMs, -1<<62)
	c.MaxRecordBytesBetweenSnapshots = r.int("metadata.log.max.record.bytes.between.snapshots", defaultMaxRecordBytesSnap, 1)
	c.MaxSnapshotIntervalMs = r.int("metadata.log.max.snapshot.interval.ms", defaultMaxSnapshotInterval, 0)
}

// readLogDirs reads log.dirs (or log.dir) and metadata.log.dir, which
// defaults to the first log dir.
func (c *Config) readLogDirs(r *reader) {
	dirs := r.get(LogDirsKey, "")
	if dirs == "" {
		dirs = r.get(LogDirKey, defaultLogDirs)
	}
	seen := map[string]bool{}
	for _, d := range SplitList(dirs) {
		cd := filepath.Clean(d)
		if seen[cd] {
			r.bad("log.dirs: %s appears more than once", d)
			continue
		}
		seen[cd] = true
		c.LogDirs = append(c.LogDirs, cd)
	}
	if len(c.LogDirs) == 0 {
		r.bad("log.dirs: at least one log directory is required")
	}
	c.MetadataLogDir = r.get(MetadataLogDirKey, "")
	if c.MetadataLogDir == "" && len(c.LogDirs) > 0 {
		c.MetadataLogDir = c.LogDirs[0]
	}
	c.MetadataLogDir = filepath.Clean(c.MetadataLogDir)
}

// RawLogDirs returns log.dirs (or log.dir) and metadata.log.dir without
// validating anything else, for tools that inspect directories of a
// configuration a node would refuse (as kafka-storage info does).
func RawLogDirs(p *Properties) []string {
	var dirs []string
	for _, k := range []string{LogDirsKey, LogDirKey} {
		if v, ok := p.Get(k); ok && strings.TrimSpace(v) != "" {
			dirs = SplitList(v)
			break
		}
	}
	if v, ok := p.Get(MetadataLogDirKey); ok {
		if v = strings.TrimSpace(v); v != "" && !contains(dirs, v) {
			dirs = append(dirs, v)
		}
	}
	return dirs
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

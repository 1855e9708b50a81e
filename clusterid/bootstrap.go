package clusterid

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kraftd/kraftd/metadatalog/vfs"
	"github.com/kraftd/kraftd/protocol"
)

// BootstrapFile is the file format writes into every dir: the records the
// first active controller writes into an empty metadata log
// (metadata.version and other feature levels). Kafka 4.4 reads it when a
// metadata dir has no bootstrap snapshot; its own format writes only the
// snapshot.
const BootstrapFile = "bootstrap.checkpoint"

// featureLevelRecordAPIKey is FeatureLevelRecord's metadata record type.
const featureLevelRecordAPIKey = 12

// Control record types used in checkpoint files.
const (
	controlSnapshotHeader int16 = 3
	controlSnapshotFooter int16 = 4
)

// featureLevelRecord encodes FeatureLevelRecord v0 in the metadata log's
// ApiMessageAndVersion framing: frame version 1, api key, version (unsigned
// varints), then the flexible body {Name compact string, FeatureLevel int16,
// tags}.
func featureLevelRecord(name string, level int16) []byte {
	b := binary.AppendUvarint(nil, 1)
	b = binary.AppendUvarint(b, featureLevelRecordAPIKey)
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, uint64(len(name))+1)
	b = append(b, name...)
	b = binary.BigEndian.AppendUint16(b, uint16(level))
	return append(b, 0) // no tagged fields
}

// controlKey is a control record key: version 0, then the type.
func controlKey(typ int16) []byte {
	return []byte{0, 0, byte(uint16(typ) >> 8), byte(typ)}
}

// BootstrapCheckpoint encodes a bootstrap.checkpoint as Kafka's
// BatchFileWriter does: a SnapshotHeader control batch at offset 0
// (LastContainedLogTimestamp 0), one data batch with records, then a
// SnapshotFooter control batch, all at epoch 0, stamped with now.
func BootstrapCheckpoint(records [][]byte, now time.Time) []byte {
	ts := now.UnixMilli()
	header := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} // version 0, timestamp 0, no tags
	out := protocol.AppendBatch(nil, protocol.Batch{
		BaseOffset: 0, Control: true, BaseTimestamp: ts, MaxTimestamp: ts,
		Records: []protocol.Record{{Key: controlKey(controlSnapshotHeader), Value: header}},
	})
	next := int64(1)
	if len(records) > 0 {
		recs := make([]protocol.Record, len(records))
		for i, r := range records {
			recs[i] = protocol.Record{Value: r}
		}
		out = protocol.AppendBatch(out, protocol.Batch{BaseOffset: next, BaseTimestamp: ts, MaxTimestamp: ts, Records: recs})
		next += int64(len(records))
	}
	return protocol.AppendBatch(out, protocol.Batch{
		BaseOffset: next, Control: true, BaseTimestamp: ts, MaxTimestamp: ts,
		Records: []protocol.Record{{Key: controlKey(controlSnapshotFooter), Value: []byte{0, 0, 0}}},
	})
}

// writeBootstrapCheckpoint writes dir/bootstrap.checkpoint atomically and
// durably.
func writeBootstrapCheckpoint(fsys vfs.FS, dir string, records [][]byte, now time.Time) error {
	p := filepath.Join(dir, BootstrapFile)
	if err := vfs.WriteFileAtomic(fsys, p, BootstrapCheckpoint(records, now)); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

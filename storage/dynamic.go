package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
)

// InitialController is one voter of a dynamic quorum's first voter set
// (kafka-storage format --initial-controllers id@host:port:directoryId, or
// --standalone for the node itself).
type InitialController struct {
	NodeID      int32
	Host        string
	Port        uint16
	DirectoryID uuid.UUID
}

// ParseInitialControllers parses Kafka's --initial-controllers value:
// comma-separated id@host:port:directoryId entries, IPv6 hosts in brackets.
// Node ids must be distinct; like Kafka, two voters may share a directory id.
func ParseInitialControllers(s string) ([]InitialController, error) {
	var out []InitialController
	ids := map[int32]bool{}
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		c, err := parseInitialController(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("storage: initial controller %q: %w", clip(part), err)
		}
		if ids[c.NodeID] {
			return nil, fmt.Errorf("storage: initial controllers: Node id %d was specified more than once.", c.NodeID)
		}
		ids[c.NodeID] = true
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("storage: initial controllers: No voters given.")
	}
	return out, nil
}

func parseInitialController(s string) (InitialController, error) {
	var c InitialController
	at := strings.IndexByte(s, '@')
	switch {
	case at < 0:
		return c, errors.New("No @ found in dynamic voter string.")
	case at == 0:
		return c, errors.New("Invalid @ at beginning of dynamic voter string.")
	}
	id, err := strconv.ParseInt(s[:at], 10, 32)
	if err != nil {
		return c, errors.New("Failed to parse node id in dynamic voter string.")
	}
	if id < 0 {
		return c, fmt.Errorf("Invalid negative node id %d in dynamic voter string.", id)
	}
	c.NodeID = int32(id)
	rest := s[at+1:]
	if rest == "" {
		return c, errors.New("No hostname found after node id.")
	}
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return c, errors.New("Hostname began with left bracket, but no right bracket was found.")
		}
		c.Host, rest = rest[1:end], rest[end+1:]
	} else {
		colon := strings.IndexByte(rest, ':')
		if colon < 0 {
			return c, errors.New("No colon following hostname could be found.")
		}
		c.Host, rest = rest[:colon], rest[colon:]
	}
	if !strings.HasPrefix(rest, ":") {
		return c, errors.New("Port section must start with a colon.")
	}
	rest = rest[1:]
	colon := strings.IndexByte(rest, ':')
	if colon < 0 {
		return c, errors.New("No colon following port could be found.")
	}
	port, err := strconv.ParseInt(rest[:colon], 10, 32)
	if err != nil {
		return c, errors.New("Failed to parse port in dynamic voter string.")
	}
	if port < 0 || port > 65535 {
		return c, fmt.Errorf("Invalid port %d in dynamic voter string.", port)
	}
	c.Port = uint16(port)
	dir, err := uuid.Parse(rest[colon+1:])
	if err != nil {
		return c, fmt.Errorf("Failed to parse directory ID in dynamic voter string.: %w", err)
	}
	if uuid.ReservedDirectoryID(dir) {
		return c, fmt.Errorf("directory id %s is reserved", dir)
	}
	c.DirectoryID = dir
	return c, nil
}

// BootstrapSnapshotName is the KRaft bootstrap snapshot (id 0-0) format
// writes into a controller's metadata partition dir.
const BootstrapSnapshotName = "00000000000000000000-0000000000.checkpoint"

// BootstrapSnapshot encodes the bootstrap snapshot as Kafka 4.4's format
// writes it with RecordsSnapshotWriter, epoch 0 and offsets from 0: a
// control batch with the SnapshotHeader and, for kraft.version 1, the
// KRaftVersion record and (when there are initial voters) the Voters record;
// one batch with the bootstrap records; a SnapshotFooter control batch.
// Each voter gets listener (upper-cased, as Kafka normalises listener
// names) and kraft.version range 0-1, in Kafka's voter order.
func BootstrapSnapshot(kraftVersion int16, voters []InitialController, listener string, records [][]byte, now time.Time) []byte {
	ts := now.UnixMilli()
	header := protocol.SnapshotHeaderRecord{LastContainedLogTimestamp: ts}.AppendTo(nil)
	control := []protocol.Record{{Key: protocol.ControlKey(protocol.ControlSnapshotHeader), Value: header}}
	if kraftVersion > 0 {
		kv := protocol.KRaftVersionRecord{KRaftVersion: kraftVersion}.AppendTo(nil)
		control = append(control, protocol.Record{Key: protocol.ControlKey(protocol.ControlKRaftVersion), Value: kv})
		if len(voters) > 0 {
			vr := votersRecord(voters, listener).AppendTo(nil)
			control = append(control, protocol.Record{Key: protocol.ControlKey(protocol.ControlKRaftVoters), Value: vr})
		}
	}
	out := protocol.AppendBatch(nil, protocol.Batch{BaseOffset: 0, Control: true, BaseTimestamp: ts, MaxTimestamp: ts, Records: control})
	next := int64(len(control))
	if len(records) > 0 {
		recs := make([]protocol.Record, len(records))
		for i, r := range records {
			recs[i] = protocol.Record{Value: r}
		}
		out = protocol.AppendBatch(out, protocol.Batch{BaseOffset: next, BaseTimestamp: ts, MaxTimestamp: ts, Records: recs})
		next += int64(len(records))
	}
	return protocol.AppendControlBatch(out, next, 0, ts, protocol.ControlSnapshotFooter, protocol.SnapshotFooterRecord{}.AppendTo(nil))
}

// votersRecord is the initial voter set as DynamicVoters.toVoterSet and
// VoterSet.toVotersRecord build it.
func votersRecord(voters []InitialController, listener string) protocol.VotersRecord {
	vr := protocol.VotersRecord{}
	for _, v := range votersInKafkaOrder(voters) {
		vr.Voters = append(vr.Voters, protocol.VotersRecordVoter{
			VoterID:             v.NodeID,
			VoterDirectoryID:    v.DirectoryID,
			Endpoints:           []protocol.VotersRecordEndpoint{{Name: strings.ToUpper(listener), Host: javaHostString(v.Host), Port: v.Port}},
			MinSupportedVersion: 0,
			MaxSupportedVersion: 1,
		})
	}
	return vr
}

// writeBootstrapSnapshot writes the 0-0 snapshot into
// dir/__cluster_metadata-0 as a frozen snapshot: staged in a
// .checkpoint.part file (which the metadata log removes at open should a
// crash leave it), fsynced, made read-only, renamed, the partition dir
// fsynced. vfs.MkdirAll made the partition dir's own entry durable.
func writeBootstrapSnapshot(fsys vfs.FS, dir string, data []byte) error {
	part := topics.PartitionDir(dir, topics.ClusterMetadata)
	if err := vfs.MkdirAll(fsys, part, 0o755); err != nil {
		return err
	}
	final := filepath.Join(part, BootstrapSnapshotName)
	temp := strings.TrimSuffix(final, ".checkpoint") + "-bootstrap.checkpoint.part"
	if err := vfs.WriteFileAtomicVia(fsys, temp, final, data, 0o444); err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	return nil
}

package clusterid

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/metadatalog/vfs"
	"github.com/kraftd/kraftd/protocol"
)

// InitialController is one voter of a dynamic quorum's first voter set
// (kafka-storage format --initial-controllers id@host:port:directoryId, or
// --standalone for the node itself).
type InitialController struct {
	NodeID      int32
	Host        string
	Port        uint16
	DirectoryID UUID
}

// ParseInitialControllers parses Kafka's --initial-controllers value:
// comma-separated id@host:port:directoryId entries, IPv6 hosts in brackets.
// Node ids and directory ids must be distinct.
func ParseInitialControllers(s string) ([]InitialController, error) {
	var out []InitialController
	ids := map[int32]bool{}
	dirs := map[UUID]bool{}
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		c, err := parseInitialController(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("clusterid: initial controller %q: %w", clip(part), err)
		}
		if ids[c.NodeID] {
			return nil, fmt.Errorf("clusterid: initial controllers: node id %d was specified more than once", c.NodeID)
		}
		if dirs[c.DirectoryID] {
			return nil, fmt.Errorf("clusterid: initial controllers: directory id %s was specified more than once", c.DirectoryID)
		}
		ids[c.NodeID], dirs[c.DirectoryID] = true, true
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("clusterid: initial controllers: no voters in %q", clip(s))
	}
	return out, nil
}

func parseInitialController(s string) (InitialController, error) {
	var c InitialController
	at := strings.IndexByte(s, '@')
	switch {
	case at < 0:
		return c, fmt.Errorf("no @ found")
	case at == 0:
		return c, fmt.Errorf("invalid @ at the beginning")
	}
	id, err := strconv.ParseInt(s[:at], 10, 32)
	if err != nil || id < 0 {
		return c, fmt.Errorf("invalid node id %q", s[:at])
	}
	c.NodeID = int32(id)
	rest := s[at+1:]
	if rest == "" {
		return c, fmt.Errorf("no hostname after the node id")
	}
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return c, fmt.Errorf("hostname begins with '[' but has no ']'")
		}
		c.Host, rest = rest[1:end], rest[end+1:]
	} else {
		colon := strings.IndexByte(rest, ':')
		if colon < 0 {
			return c, fmt.Errorf("no colon after the hostname")
		}
		c.Host, rest = rest[:colon], rest[colon:]
	}
	if !strings.HasPrefix(rest, ":") {
		return c, fmt.Errorf("port section must start with a colon")
	}
	rest = rest[1:]
	colon := strings.IndexByte(rest, ':')
	if colon < 0 {
		return c, fmt.Errorf("no colon after the port")
	}
	port, err := strconv.ParseUint(rest[:colon], 10, 16)
	if err != nil {
		return c, fmt.Errorf("invalid port %q", rest[:colon])
	}
	c.Port = uint16(port)
	dir, err := Parse(rest[colon+1:])
	if err != nil {
		return c, fmt.Errorf("directory id: %w", err)
	}
	if ReservedDirectoryID(dir) {
		return c, fmt.Errorf("directory id %s is reserved", dir)
	}
	c.DirectoryID = dir
	return c, nil
}

// BootstrapSnapshotName is the KRaft bootstrap snapshot (id 0-0) format
// writes for a dynamic quorum, inside the metadata partition dir.
const BootstrapSnapshotName = "00000000000000000000-0000000000.checkpoint"

// BootstrapSnapshot encodes the bootstrap snapshot as Kafka's
// RecordsSnapshotWriter does for kraft.version 1: one control batch holding
// SnapshotHeader, KRaftVersion(1) and Voters records, then a SnapshotFooter
// control batch, epoch 0, base offsets from 0. Each voter gets listener
// (upper-cased, Kafka normalises listener names) and kraft.version range
// 0-1.
func BootstrapSnapshot(voters []InitialController, listener string, now time.Time) []byte {
	ts := now.UnixMilli()
	vr := protocol.VotersRecord{}
	for _, v := range voters {
		vr.Voters = append(vr.Voters, protocol.VotersRecordVoter{
			VoterID:             v.NodeID,
			VoterDirectoryID:    v.DirectoryID,
			Endpoints:           []protocol.VotersRecordEndpoint{{Name: strings.ToUpper(listener), Host: v.Host, Port: v.Port}},
			MinSupportedVersion: 0,
			MaxSupportedVersion: 1,
		})
	}
	header := protocol.SnapshotHeaderRecord{LastContainedLogTimestamp: ts}.AppendTo(nil)
	kv := protocol.KRaftVersionRecord{KRaftVersion: 1}.AppendTo(nil)
	out := protocol.AppendBatch(nil, protocol.Batch{
		BaseOffset: 0, Control: true, BaseTimestamp: ts, MaxTimestamp: ts,
		Records: []protocol.Record{
			{Key: protocol.ControlKey(protocol.ControlSnapshotHeader), Value: header},
			{Key: protocol.ControlKey(protocol.ControlKRaftVersion), Value: kv},
			{Key: protocol.ControlKey(protocol.ControlKRaftVoters), Value: vr.AppendTo(nil)},
		},
	})
	return protocol.AppendControlBatch(out, 3, 0, ts, protocol.ControlSnapshotFooter, protocol.SnapshotFooterRecord{}.AppendTo(nil))
}

// writeBootstrapSnapshot writes the 0-0 snapshot into
// dir/__cluster_metadata-0 as a frozen snapshot: staged in a
// .checkpoint.part file (which the metadata log removes at open should a
// crash leave it), fsynced, made read-only, renamed, the partition dir
// fsynced. vfs.MkdirAll made the partition dir's own entry durable.
func writeBootstrapSnapshot(fsys vfs.FS, dir string, data []byte) error {
	part := filepath.Join(dir, "__cluster_metadata-0")
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

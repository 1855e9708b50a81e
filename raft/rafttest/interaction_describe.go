package rafttest

import (
	"fmt"
	"math"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// One-line renderings of the raft RPCs for the interaction golden files:
// every field a reviewer needs to check KIP-595 behaviour, nothing that
// varies between runs (no correlation ids, no byte counts of encodings).

// msgName is the api name, with "Response" appended for responses; the
// deliver-msgs/drop-msgs type= filter matches it.
func msgName(m any) string {
	switch r := m.(type) {
	case kmsg.Request:
		return kmsg.NameForKey(r.Key())
	case kmsg.Response:
		return kmsg.NameForKey(r.Key()) + "Response"
	}
	return fmt.Sprintf("%T", m)
}

// describeMsg renders a request or response as "Name vN field=value ...".
func describeMsg(m any) string {
	var b strings.Builder
	switch r := m.(type) {
	case kmsg.Request:
		fmt.Fprintf(&b, "%s v%d", msgName(m), r.GetVersion())
	case kmsg.Response:
		fmt.Fprintf(&b, "%s v%d", msgName(m), r.GetVersion())
	}
	f := func(format string, args ...any) { b.WriteByte(' '); fmt.Fprintf(&b, format, args...) }
	errField := func(code int16) {
		if code != 0 {
			f("err=%s", errName(code))
		}
	}
	switch r := m.(type) {
	case *kmsg.VoteRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				f("epoch=%d candidate=%d%s last=%s", p.CandidateEpoch, p.CandidateID, dirName(p.CandidateDirectoryID),
					offEpoch(p.LastOffset, p.LastOffsetEpoch))
				if p.VoterDirectoryID != [16]byte{} {
					f("voter=%d%s", r.VoterID, dirName(p.VoterDirectoryID))
				}
				if p.PreVote {
					f("pre-vote")
				}
			}
		}
	case *kmsg.VoteResponse:
		errField(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				errField(p.ErrorCode)
				f("epoch=%d leader=%s granted=%v", p.LeaderEpoch, idName(p.LeaderID), p.VoteGranted)
			}
		}
	case *kmsg.BeginQuorumEpochRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				f("epoch=%d leader=%d", p.LeaderEpoch, p.LeaderID)
				if p.VoterDirectoryID != [16]byte{} {
					f("voter=%d%s", r.VoterID, dirName(p.VoterDirectoryID))
				}
			}
		}
	case *kmsg.BeginQuorumEpochResponse:
		errField(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				errField(p.ErrorCode)
				f("epoch=%d leader=%s", p.LeaderEpoch, idName(p.LeaderID))
			}
		}
	case *kmsg.EndQuorumEpochRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				succ := p.PreferredSuccessors
				for _, c := range p.PreferredCandidates {
					succ = append(succ, c.CandidateID)
				}
				f("epoch=%d leader=%d successors=%v", p.LeaderEpoch, p.LeaderID, succ)
			}
		}
	case *kmsg.EndQuorumEpochResponse:
		errField(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				errField(p.ErrorCode)
				f("epoch=%d leader=%s", p.LeaderEpoch, idName(p.LeaderID))
			}
		}
	case *kmsg.FetchRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				f("replica=%d%s epoch=%d offset=%d last-fetched-epoch=%d", r.ReplicaState.ID, dirName(p.ReplicaDirectoryID),
					p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch)
				if r.Version >= 18 {
					if p.HighWatermark == math.MaxInt64 {
						f("hw=unset") // the field's default: no long-poll on HW changes
					} else {
						f("hw=%d", p.HighWatermark)
					}
				}
				f("max-wait=%dms", r.MaxWaitMillis)
			}
		}
	case *kmsg.FetchResponse:
		errField(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				errField(p.ErrorCode)
				f("leader=%s epoch=%d hw=%d", idName(p.CurrentLeader.LeaderID), p.CurrentLeader.LeaderEpoch, p.HighWatermark)
				if p.DivergingEpoch.Epoch >= 0 {
					f("diverging=%s", offEpoch(p.DivergingEpoch.EndOffset, p.DivergingEpoch.Epoch))
				}
				if p.SnapshotID.Epoch >= 0 {
					f("snapshot=%s", offEpoch(p.SnapshotID.EndOffset, p.SnapshotID.Epoch))
				}
				if len(p.RecordBatches) > 0 {
					f("batches=%s", describeBatches(p.RecordBatches))
				}
			}
		}
	case *kmsg.FetchSnapshotRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				f("replica=%d epoch=%d snapshot=%s position=%d", r.ReplicaID, p.CurrentLeaderEpoch,
					offEpoch(p.SnapshotID.EndOffset, p.SnapshotID.Epoch), p.Position)
			}
		}
	case *kmsg.FetchSnapshotResponse:
		errField(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				errField(p.ErrorCode)
				f("leader=%s epoch=%d snapshot=%s size=%d position=%d bytes=%d", idName(p.CurrentLeader.LeaderID),
					p.CurrentLeader.LeaderEpoch, offEpoch(p.SnapshotID.EndOffset, p.SnapshotID.Epoch), p.Size, p.Position, len(p.Bytes))
			}
		}
	default:
		describeVoterChange(m, f, errField)
	}
	return b.String()
}

// describeVoterChange covers AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter
// and the ApiVersions a leader sends to a joining voter.
func describeVoterChange(m any, f func(string, ...any), errField func(int16)) {
	msg := func(s *string) {
		if s != nil {
			f("msg=%q", *s)
		}
	}
	switch r := m.(type) {
	case *kmsg.AddRaftVoterRequest:
		f("voter=%d%s listeners=%d ack-when-committed=%v", r.VoterID, dirName(r.VoterDirectoryID), len(r.Listeners), r.AckWhenCommitted)
	case *kmsg.AddRaftVoterResponse:
		errField(r.ErrorCode)
		msg(r.ErrorMessage)
	case *kmsg.RemoveRaftVoterRequest:
		f("voter=%d%s", r.VoterID, dirName(r.VoterDirectoryID))
	case *kmsg.RemoveRaftVoterResponse:
		errField(r.ErrorCode)
		msg(r.ErrorMessage)
	case *kmsg.UpdateRaftVoterRequest:
		f("voter=%d%s epoch=%d", r.VoterID, dirName(r.VoterDirectoryID), r.CurrentLeaderEpoch)
		for _, l := range r.Listeners {
			f("%s=%s:%d", l.Name, l.Host, l.Port)
		}
		f("kraft.version=%d-%d", r.KRaftVersionFeature.MinSupportedVersion, r.KRaftVersionFeature.MaxSupportedVersion)
	case *kmsg.UpdateRaftVoterResponse:
		errField(r.ErrorCode)
		f("leader=%s epoch=%d", idName(r.CurrentLeader.LeaderID), r.CurrentLeader.LeaderEpoch)
	case *kmsg.UpdateFeaturesRequest:
		for _, u := range r.FeatureUpdates {
			f("%s=%d type=%d", u.Feature, u.MaxVersionLevel, u.UpgradeType)
		}
		if r.ValidateOnly {
			f("validate-only")
		}
	case *kmsg.UpdateFeaturesResponse:
		errField(r.ErrorCode)
		msg(r.ErrorMessage)
	case *kmsg.ApiVersionsResponse:
		errField(r.ErrorCode)
		for _, ft := range r.SupportedFeatures {
			f("%s=%d-%d", ft.Name, ft.MinVersion, ft.MaxVersion)
		}
	}
}

// offEpoch renders an (offset, epoch) pair the way Kafka names snapshots.
func offEpoch(offset int64, epoch int32) string { return fmt.Sprintf("%d@%d", offset, epoch) }

func idName(id int32) string {
	if id < 0 {
		return "none"
	}
	return fmt.Sprint(id)
}

func errName(code int16) string {
	if code == kerr.NotLeaderForPartition.Code {
		return "NOT_LEADER_OR_FOLLOWER" // kerr keeps the pre-2.7 name
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return fmt.Sprint(code)
}

// describeBatches lists record batches as [base..last@epoch payload ...]:
// data record values are printed as text, control records by type.
func describeBatches(data []byte) string {
	var parts []string
	for rest := data; len(rest) > 0; {
		b, next, err := protocol.DecodeBatch(rest)
		if err != nil {
			parts = append(parts, "undecodable: "+err.Error())
			break
		}
		rest = next
		parts = append(parts, fmt.Sprintf("%d..%d@%d %s", b.BaseOffset, b.LastOffset(), b.PartitionLeaderEpoch, describeRecords(b.Control, recordValues(b))))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func recordValues(b protocol.Batch) [][]byte {
	vals := make([][]byte, len(b.Records))
	for i, r := range b.Records {
		if b.Control {
			vals[i] = r.Key // the control type lives in the key
		} else {
			vals[i] = r.Value
		}
	}
	return vals
}

// describeRecords renders data values as text and control records (given
// their keys) by type.
func describeRecords(control bool, vals [][]byte) string {
	var s []string
	for _, v := range vals {
		if !control {
			s = append(s, string(v))
			continue
		}
		typ, err := protocol.ControlType(v)
		switch {
		case err != nil:
			s = append(s, "control?")
		case typ == protocol.ControlLeaderChange:
			s = append(s, "LeaderChange")
		case typ == protocol.ControlKRaftVersion:
			s = append(s, "KRaftVersion")
		case typ == protocol.ControlKRaftVoters:
			s = append(s, "KRaftVoters")
		default:
			s = append(s, fmt.Sprintf("control(%d)", typ))
		}
	}
	return strings.Join(s, " ")
}

// dirName shows a directory id of the dynamic scripts (DirectoryID) after the
// node id it goes with; "" for none.
func dirName(d [16]byte) string {
	if d == ([16]byte{}) {
		return ""
	}
	return fmt.Sprintf("/dir%d", d[0])
}

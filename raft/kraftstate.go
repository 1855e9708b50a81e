package raft

import (
	"errors"
	"fmt"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft/history"
)

// kraftState is what the KRaftVersion and Voters control records say, as a
// function of the log offset (Kafka's KRaftControlRecordStateMachine). It is
// fed from the latest snapshot, then the log, then every batch appended;
// truncation and snapshot installation rewind it. The latest values, from
// committed and uncommitted records alike, are the ones in force: the voter
// set changes when its record is appended, as in Kafka.
type kraftState struct {
	// static is the controller.quorum.voters set, in force while no
	// Voters record is known (kraft.version 0).
	static   VoterSet
	voters   history.History[VoterSet]
	versions history.History[int16]
	// next is the first log offset not yet read into the histories.
	next int64
}

// controlChange is one KRaftVersion or Voters record found in a batch.
type controlChange struct {
	offset int64
	voters *VoterSet // a Voters record
	kraft  int16     // a KRaftVersion record's level, when voters is nil
}

var errBadVoterChange = errors.New("raft: invalid voter set change")

// latestVoters is the voter set in force at the log end and the offset of
// its record (-2 for the static set, -1 for a bootstrap snapshot's).
func (k *kraftState) latestVoters() (VoterSet, int64) {
	if e, ok := k.voters.Last(); ok {
		return e.Value, e.Offset
	}
	return k.static, -2
}

// latestVersion is the finalized kraft.version at the log end.
func (k *kraftState) latestVersion() int16 {
	if e, ok := k.versions.Last(); ok {
		return e.Value
	}
	return 0
}

// votersAt is the voter set in force at offset.
func (k *kraftState) votersAt(offset int64) VoterSet {
	if vs, ok := k.voters.At(offset); ok {
		return vs
	}
	return k.static
}

// check reports whether changes may follow the current history: each new
// voter set must overlap a majority of the one before it when that one came
// from the log (the static and bootstrap sets were never replicated, so a
// change from them is not checked, as in Kafka's VoterSetHistory).
func (k *kraftState) check(changes []controlChange) error {
	last, lastOff := k.latestVoters()
	for _, c := range changes {
		if c.voters == nil {
			continue
		}
		if lastOff >= 0 && !last.OverlappingMajority(*c.voters) {
			return fmt.Errorf("%w: voters %v at offset %d do not overlap a majority of %v (offset %d)",
				errBadVoterChange, c.voters, c.offset, last, lastOff)
		}
		last, lastOff = *c.voters, c.offset
	}
	return nil
}

// apply records checked changes.
func (k *kraftState) apply(changes []controlChange) error {
	for _, c := range changes {
		var err error
		if c.voters != nil {
			err = k.voters.AddAt(c.offset, *c.voters)
		} else {
			err = k.versions.AddAt(c.offset, c.kraft)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// truncateNew forgets everything at offsets >= end.
func (k *kraftState) truncateNew(end int64) {
	k.voters.TruncateNew(end)
	k.versions.TruncateNew(end)
	k.next = min(k.next, end)
}

// truncateOld compacts entries the log no longer holds.
func (k *kraftState) truncateOld(start int64) {
	k.voters.TruncateOld(start)
	k.versions.TruncateOld(start)
}

// resetTo replaces the histories with a snapshot's changes; the log is
// read from next (the snapshot's end offset) on.
func (k *kraftState) resetTo(next int64, changes []controlChange) error {
	k.voters.Clear()
	k.versions.Clear()
	k.next = next
	return k.apply(changes)
}

// controlChanges decodes the KRaftVersion and Voters records of the whole
// batches in data and returns the offset after the last of them (-1 when
// data holds none). Non-control batches cost a header parse. at, when >= -1,
// is the offset every record is recorded at (a snapshot's records count at
// its last contained offset); else each record's own offset.
func controlChanges(data []byte, at int64) ([]controlChange, int64, error) {
	var out []controlChange
	next := int64(-1)
	for len(data) >= protocol.BatchHeaderSize {
		h, err := protocol.ParseBatchHeader(data)
		if err != nil {
			return nil, 0, err
		}
		if h.Size() > len(data) {
			break // a trailing partial batch
		}
		next = h.NextOffset()
		if h.IsControl() {
			b, _, err := protocol.DecodeBatch(data[:h.Size()])
			if err != nil {
				return nil, 0, err
			}
			for i, r := range b.Records {
				off := at
				if at < -1 {
					off = b.BaseOffset + int64(i)
				}
				c, ok, err := decodeControlChange(r, off)
				if err != nil {
					return nil, 0, fmt.Errorf("control record at offset %d: %w", b.BaseOffset+int64(i), err)
				}
				if ok {
					out = append(out, c)
				}
			}
		}
		data = data[h.Size():]
	}
	return out, next, nil
}

// decodeControlChange reads one control record; ok is false for types that
// do not concern the voter set.
func decodeControlChange(r protocol.Record, off int64) (controlChange, bool, error) {
	typ, value, err := protocol.ReadControlRecord(r)
	if err != nil {
		return controlChange{}, false, err
	}
	switch typ {
	case protocol.ControlKRaftVersion:
		var kv protocol.KRaftVersionRecord
		if err := kv.ReadFrom(value); err != nil {
			return controlChange{}, false, err
		}
		if kv.KRaftVersion < kraftVersionsSupported.Min || kv.KRaftVersion > kraftVersionsSupported.Max {
			return controlChange{}, false, fmt.Errorf("kraft.version %d is not supported (%d-%d)",
				kv.KRaftVersion, kraftVersionsSupported.Min, kraftVersionsSupported.Max)
		}
		return controlChange{offset: off, kraft: kv.KRaftVersion}, true, nil
	case protocol.ControlKRaftVoters:
		var vr protocol.VotersRecord
		if err := vr.ReadFrom(value); err != nil {
			return controlChange{}, false, err
		}
		vs, err := voterSetFromRecord(&vr)
		if err != nil {
			return controlChange{}, false, fmt.Errorf("%w: %v", errBadVoterChange, err)
		}
		return controlChange{offset: off, voters: &vs}, true, nil
	}
	return controlChange{}, false, nil
}

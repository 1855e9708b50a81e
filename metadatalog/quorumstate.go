package metadatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
)

// QuorumStateFile is the election state file in the partition dir.
const QuorumStateFile = "quorum-state"

// maxQuorumStateSize bounds what is read: a real file is ~150 bytes plus ~15
// per static voter.
const maxQuorumStateSize = 1 << 20

// QuorumStateStore is raft.QuorumStateStore on a file, in Kafka's
// FileQuorumStateStore format: one line of JSON, data_version 0 (kraft.version
// 0: clusterId, leaderId, leaderEpoch, votedId, appliedOffset, currentVoters)
// or 1 (leaderId, leaderEpoch, votedId, votedDirectoryId).
type QuorumStateStore struct {
	fs   vfs.FS
	path string
}

var _ raft.QuorumStateStore = (*QuorumStateStore)(nil)

// NewQuorumStateStore returns a store for dir/quorum-state (dir is the
// partition dir, e.g. <metadata.log.dir>/__cluster_metadata-0). fs nil means
// the OS.
func NewQuorumStateStore(fs vfs.FS, dir string) *QuorumStateStore {
	return &QuorumStateStore{fs: vfs.Or(fs), path: filepath.Join(dir, QuorumStateFile)}
}

// Path is the file the store reads and writes.
func (s *QuorumStateStore) Path() string { return s.path }

// Read returns ok=false when the file does not exist (a fresh node). Any
// other problem (empty, truncated, not JSON, unknown data_version, a missing
// field, a value no node can start from) is an error naming the file:
// resetting to epoch 0 could let the node vote twice in an epoch.
func (s *QuorumStateStore) Read() (raft.ElectionState, bool, error) {
	data, err := vfs.ReadFile(s.fs, s.path, maxQuorumStateSize)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return raft.ElectionState{}, false, nil
		}
		return raft.ElectionState{}, false, fmt.Errorf("metadatalog: read quorum state %s: %w", s.path, err)
	}
	st, err := DecodeQuorumState(data)
	if err != nil {
		return raft.ElectionState{}, false, fmt.Errorf("metadatalog: invalid quorum state %s: %w", s.path, err)
	}
	return st, true, nil
}

// Write stores st durably (quorum-state.tmp, fsync, rename, dir fsync). A
// state that Read would refuse is not written: the old file stays usable.
func (s *QuorumStateStore) Write(st raft.ElectionState) error {
	data, err := EncodeQuorumState(st)
	if err != nil {
		return fmt.Errorf("metadatalog: write quorum state %s: %w", s.path, err)
	}
	if err := vfs.WriteFileAtomic(s.fs, s.path, data); err != nil {
		return fmt.Errorf("metadatalog: write quorum state %s: %w", s.path, err)
	}
	return nil
}

// EncodeQuorumState renders st as Kafka writes it (no trailing newline):
// data_version 0 when st.Voters is non-nil (static voters), else 1. Version
// 0 has no field for the voted directory id; like Kafka's
// ElectionState.toQuorumStateData it is left out. A state that fails
// checkElectionState is an error.
func EncodeQuorumState(st raft.ElectionState) ([]byte, error) {
	if err := checkElectionState(st); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if st.Voters != nil {
		fmt.Fprintf(&b, `{"clusterId":"","leaderId":%d,"leaderEpoch":%d,"votedId":%d,"appliedOffset":0,"currentVoters":[`,
			st.LeaderID, st.Epoch, st.VotedID)
		for i, v := range st.Voters {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"voterId":%d}`, v)
		}
		b.WriteString(`],"data_version":0}`)
		return b.Bytes(), nil
	}
	fmt.Fprintf(&b, `{"leaderId":%d,"leaderEpoch":%d,"votedId":%d,"votedDirectoryId":"%s","data_version":1}`,
		st.LeaderID, st.Epoch, st.VotedID, uuid.UUID(st.VotedDirectoryID))
	return b.Bytes(), nil
}

// checkElectionState refuses values no node can start from: a state that
// decodes but cannot be used must stop the node with an error naming the
// field, not make it panic (or loop) later. The epoch must be incrementable
// (an election moves to epoch+1) and node ids are >= 0, or -1 for none.
func checkElectionState(st raft.ElectionState) error {
	switch {
	case st.Epoch < 0:
		return fmt.Errorf("field \"leaderEpoch\" is %d; an epoch is never negative", st.Epoch)
	case st.Epoch == math.MaxInt32:
		return fmt.Errorf("field \"leaderEpoch\" is %d, the largest epoch, which an election cannot increment", st.Epoch)
	case st.LeaderID < -1:
		return fmt.Errorf("field \"leaderId\" is %d; a node id is >= 0, or -1 for none", st.LeaderID)
	case st.VotedID < -1:
		return fmt.Errorf("field \"votedId\" is %d; a node id is >= 0, or -1 for none", st.VotedID)
	}
	for i, v := range st.Voters {
		if v < 0 {
			return fmt.Errorf("field \"currentVoters\": voterId of entry %d is %d; a node id is >= 0", i, v)
		}
	}
	return nil
}

// DecodeQuorumState parses a quorum-state file. Like Kafka it reads the first
// line only; it requires data_version 0 or 1 and every field of that version
// with the right JSON type, and values that pass checkElectionState.
func DecodeQuorumState(data []byte) (raft.ElectionState, error) {
	f, err := parseQuorumState(data)
	if err != nil {
		return raft.ElectionState{}, err
	}
	var st raft.ElectionState
	if st.LeaderID, err = f.int32("leaderId"); err != nil {
		return raft.ElectionState{}, err
	}
	if st.Epoch, err = f.int32("leaderEpoch"); err != nil {
		return raft.ElectionState{}, err
	}
	if st.VotedID, err = f.int32("votedId"); err != nil {
		return raft.ElectionState{}, err
	}
	if f.version == 1 {
		st.VotedDirectoryID, err = f.uuid("votedDirectoryId")
	} else {
		st.Voters, err = f.version0Voters()
	}
	if err != nil {
		return raft.ElectionState{}, err
	}
	if err := checkElectionState(st); err != nil {
		return raft.ElectionState{}, err
	}
	return st, nil
}

// quorumStateFields is a quorum-state file's JSON object by field, and its
// data_version.
type quorumStateFields struct {
	raw     map[string]json.RawMessage
	version int64
}

// parseQuorumState splits the first line of data into its fields and checks
// data_version.
func parseQuorumState(data []byte) (quorumStateFields, error) {
	var f quorumStateFields
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		if len(bytes.TrimSpace(data[i:])) != 0 {
			return f, errors.New("unexpected data after the first line")
		}
		data = data[:i]
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, errors.New("file is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f.raw); err != nil {
		return f, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return f, errors.New("trailing data after the JSON object")
	}
	if f.raw == nil {
		return f, errors.New("not a JSON object")
	}
	rawVersion, ok := f.raw["data_version"]
	if !ok {
		return f, errors.New("no data_version field")
	}
	version, err := jsonInt(rawVersion, "data_version", math.MinInt16, math.MaxInt16)
	if err != nil {
		return f, err
	}
	if version < 0 || version > 1 {
		return f, fmt.Errorf("data_version (%d) is not within the min (0) and max (1) supported version", version)
	}
	f.version = version
	return f, nil
}

// need returns a field that data_version makes mandatory.
func (f quorumStateFields) need(name string) (json.RawMessage, error) {
	v, ok := f.raw[name]
	if !ok {
		return nil, fmt.Errorf("missing field %q, which is mandatory in data_version %d", name, f.version)
	}
	return v, nil
}

func (f quorumStateFields) int32(name string) (int32, error) {
	raw, err := f.need(name)
	if err != nil {
		return 0, err
	}
	n, err := jsonInt(raw, name, math.MinInt32, math.MaxInt32)
	return int32(n), err
}

func (f quorumStateFields) uuid(name string) (uuid.UUID, error) {
	raw, err := f.need(name)
	if err != nil {
		return uuid.UUID{}, err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return uuid.UUID{}, fmt.Errorf("%s: %w", name, err)
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("%s: %w", name, err)
	}
	return id, nil
}

// version0Voters checks the fields only data_version 0 has and returns
// currentVoters, which is nullable: null and [] both mean no voters, kept
// non-nil so the state is written back as version 0.
func (f quorumStateFields) version0Voters() ([]int32, error) {
	raw, err := f.need("clusterId")
	if err != nil {
		return nil, err
	}
	var clusterID string
	if err := json.Unmarshal(raw, &clusterID); err != nil {
		return nil, fmt.Errorf("clusterId: %w", err)
	}
	if raw, err = f.need("appliedOffset"); err != nil {
		return nil, err
	}
	if _, err := jsonInt(raw, "appliedOffset", math.MinInt64, math.MaxInt64); err != nil {
		return nil, err
	}
	if raw, err = f.need("currentVoters"); err != nil {
		return nil, err
	}
	ids := []int32{}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return ids, nil
	}
	var voters []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &voters); err != nil {
		return nil, fmt.Errorf("currentVoters: %w", err)
	}
	for i, v := range voters {
		id, ok := v["voterId"]
		if !ok {
			return nil, fmt.Errorf("currentVoters[%d]: missing voterId", i)
		}
		n, err := jsonInt(id, "voterId", math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		ids = append(ids, int32(n))
	}
	return ids, nil
}

func jsonInt(raw json.RawMessage, name string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("field %q: %.40s is not an integer in [%d, %d]", name, raw, lo, hi)
	}
	return n, nil
}

package metadatalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kraftd/kraftd/clusterid"
	"github.com/kraftd/kraftd/metadatalog/vfs"
	"github.com/kraftd/kraftd/raft"
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
// field) is an error naming the file: resetting to epoch 0 could let the node
// vote twice in an epoch.
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
		return raft.ElectionState{}, false, fmt.Errorf("metadatalog: corrupt quorum state %s: %w", s.path, err)
	}
	return st, true, nil
}

// Write stores st durably (quorum-state.tmp, fsync, rename, dir fsync).
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
// ElectionState.toQuorumStateData it is left out.
func EncodeQuorumState(st raft.ElectionState) ([]byte, error) {
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
		st.LeaderID, st.Epoch, st.VotedID, base64.RawURLEncoding.EncodeToString(st.VotedDirectoryID[:]))
	return b.Bytes(), nil
}

// DecodeQuorumState parses a quorum-state file. Like Kafka it reads the first
// line only; it requires data_version 0 or 1 and every field of that version
// with the right JSON type.
func DecodeQuorumState(data []byte) (raft.ElectionState, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		if len(bytes.TrimSpace(data[i:])) != 0 {
			return raft.ElectionState{}, errors.New("unexpected data after the first line")
		}
		data = data[:i]
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return raft.ElectionState{}, errors.New("file is empty")
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return raft.ElectionState{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return raft.ElectionState{}, errors.New("trailing data after the JSON object")
	}
	if fields == nil {
		return raft.ElectionState{}, errors.New("not a JSON object")
	}
	rawVersion, ok := fields["data_version"]
	if !ok {
		return raft.ElectionState{}, errors.New("no data_version field")
	}
	version, err := jsonInt(rawVersion, "data_version", math.MinInt16, math.MaxInt16)
	if err != nil {
		return raft.ElectionState{}, err
	}
	if version < 0 || version > 1 {
		return raft.ElectionState{}, fmt.Errorf("data_version (%d) is not within the min (0) and max (1) supported version", version)
	}
	need := func(name string) (json.RawMessage, error) {
		v, ok := fields[name]
		if !ok {
			return nil, fmt.Errorf("missing field %q, which is mandatory in data_version %d", name, version)
		}
		return v, nil
	}
	var st raft.ElectionState
	for _, f := range []struct {
		name string
		dst  *int32
	}{{"leaderId", &st.LeaderID}, {"leaderEpoch", &st.Epoch}, {"votedId", &st.VotedID}} {
		raw, err := need(f.name)
		if err != nil {
			return raft.ElectionState{}, err
		}
		n, err := jsonInt(raw, f.name, math.MinInt32, math.MaxInt32)
		if err != nil {
			return raft.ElectionState{}, err
		}
		*f.dst = int32(n)
	}
	if version == 1 {
		raw, err := need("votedDirectoryId")
		if err != nil {
			return raft.ElectionState{}, err
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return raft.ElectionState{}, fmt.Errorf("votedDirectoryId: %w", err)
		}
		id, err := clusterid.Parse(s)
		if err != nil {
			return raft.ElectionState{}, fmt.Errorf("votedDirectoryId: %w", err)
		}
		st.VotedDirectoryID = id
		return st, nil
	}
	raw, err := need("clusterId")
	if err != nil {
		return raft.ElectionState{}, err
	}
	var clusterID string
	if err := json.Unmarshal(raw, &clusterID); err != nil {
		return raft.ElectionState{}, fmt.Errorf("clusterId: %w", err)
	}
	raw, err = need("appliedOffset")
	if err != nil {
		return raft.ElectionState{}, err
	}
	if _, err := jsonInt(raw, "appliedOffset", math.MinInt64, math.MaxInt64); err != nil {
		return raft.ElectionState{}, err
	}
	raw, err = need("currentVoters")
	if err != nil {
		return raft.ElectionState{}, err
	}
	// currentVoters is nullable in version 0; null and [] both mean no
	// voters, kept non-nil so the state is written back as version 0.
	st.Voters = []int32{}
	if !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var voters []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &voters); err != nil {
			return raft.ElectionState{}, fmt.Errorf("currentVoters: %w", err)
		}
		for i, v := range voters {
			id, ok := v["voterId"]
			if !ok {
				return raft.ElectionState{}, fmt.Errorf("currentVoters[%d]: missing voterId", i)
			}
			n, err := jsonInt(id, "voterId", math.MinInt32, math.MaxInt32)
			if err != nil {
				return raft.ElectionState{}, err
			}
			st.Voters = append(st.Voters, int32(n))
		}
	}
	return st, nil
}

func jsonInt(raw json.RawMessage, name string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("field %q: %.40s is not an integer in [%d, %d]", name, raw, lo, hi)
	}
	return n, nil
}

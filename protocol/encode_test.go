package protocol

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// raftFetch builds a Fetch request the way kraftd's raft layer fills it: the v15+ replica
// state, the v17+ directory id and the v18+ high watermark all set.
func raftFetch(version int16) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaState.ID, req.ReplicaState.Epoch = 2, -1
	req.MaxWaitMillis = 500
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = [16]byte{15: 1}
	p := kmsg.NewFetchRequestTopicPartition()
	p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch = 3, 10, 3
	p.ReplicaDirectoryID = [16]byte{0: 9}
	p.HighWatermark = 8
	t.Partitions = []kmsg.FetchRequestTopicPartition{p}
	req.Topics = []kmsg.FetchRequestTopic{t}
	return req
}

// fetchTags returns the tags present in an encoded Fetch request: top level and partition.
func fetchTags(t *testing.T, frame []byte) (top, partition []int32) {
	t.Helper()
	_, req, err := testApis.ParseRequest(frame[4:])
	if err != nil {
		t.Fatal(err)
	}
	r := req.(*kmsg.FetchRequest)
	if r.ReplicaState.ID != -1 || r.ReplicaState.Epoch != -1 {
		top = append(top, 1)
	}
	p := r.Topics[0].Partitions[0]
	if p.ReplicaDirectoryID != [16]byte{} {
		partition = append(partition, 0)
	}
	if p.HighWatermark != math.MaxInt64 {
		partition = append(partition, 1)
	}
	return top, partition
}

func TestAppendRequestDropsTagsTheVersionLacks(t *testing.T) {
	for _, c := range []struct {
		version        int16
		top, partition int
	}{{13, 0, 0}, {14, 0, 0}, {15, 1, 0}, {16, 1, 0}, {17, 1, 1}, {18, 1, 2}} {
		req := raftFetch(c.version)
		frame := AppendRequest(nil, 1, nil, req)
		top, part := fetchTags(t, frame)
		if len(top) != c.top || len(part) != c.partition {
			t.Fatalf("v%d: tags top %v partition %v, want %d and %d", c.version, top, part, c.top, c.partition)
		}
		_, back, _ := testApis.ParseRequest(frame[4:])
		if c.version < 15 && back.(*kmsg.FetchRequest).ReplicaID != 2 {
			t.Fatalf("v%d: ReplicaID %d, want the replica state's 2", c.version, back.(*kmsg.FetchRequest).ReplicaID)
		}
		// The same bytes as a request built only with the version's own fields.
		clean := raftFetch(c.version)
		if c.version < 15 {
			clean.ReplicaState.ID = -1
			clean.ReplicaID = 2
		}
		if c.version < 17 {
			clean.Topics[0].Partitions[0].ReplicaDirectoryID = [16]byte{}
		}
		if c.version < 18 {
			clean.Topics[0].Partitions[0].HighWatermark = math.MaxInt64
		}
		if want := AppendRequest(nil, 1, nil, clean); !bytes.Equal(frame, want) {
			t.Fatalf("v%d: %x, want %x", c.version, frame, want)
		}
	}

	snap := kmsg.NewPtrFetchSnapshotRequest()
	snap.SetVersion(0)
	st := kmsg.NewFetchSnapshotRequestTopic()
	sp := kmsg.NewFetchSnapshotRequestTopicPartition()
	sp.ReplicaDirectoryID = [16]byte{1}
	st.Partitions = []kmsg.FetchSnapshotRequestTopicPartition{sp}
	snap.Topics = []kmsg.FetchSnapshotRequestTopic{st}
	frame := AppendRequest(nil, 1, nil, snap)
	_, back, err := testApis.ParseRequest(frame[4:])
	if err != nil || back.(*kmsg.FetchSnapshotRequest).Topics[0].Partitions[0].ReplicaDirectoryID != [16]byte{} {
		t.Fatalf("FetchSnapshot v0 carries a directory id: %v", err)
	}
}

func TestAppendResponseDropsTagsTheVersionLacks(t *testing.T) {
	vote := kmsg.NewPtrVoteResponse()
	vote.SetVersion(0)
	vote.NodeEndpoints = []kmsg.VoteResponseNodeEndpoint{{NodeID: 1, Host: "h", Port: 1}}
	// v0 body: error code, empty topics, empty tag block.
	if got := AppendResponse(nil, 1, vote); !bytes.Equal(got, []byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0}) {
		t.Fatalf("vote v0: %x", got)
	}
	if len(vote.NodeEndpoints) != 1 {
		t.Fatal("the response was modified")
	}
	vote = kmsg.NewPtrVoteResponse()
	vote.SetVersion(1)
	vote.NodeEndpoints = []kmsg.VoteResponseNodeEndpoint{{NodeID: 1, Host: "h", Port: 1}}
	back, err := ParseResponse(AppendResponse(nil, 1, vote)[4:], int16(kmsg.Vote), 1)
	if err != nil || len(back.(*kmsg.VoteResponse).NodeEndpoints) != 1 {
		t.Fatalf("vote v1 lost its endpoints: %v", err)
	}

	for _, v := range []int16{15, 16} {
		fr := fetchResponse(v, []byte{})
		fr.Brokers = []kmsg.FetchResponseBroker{{NodeID: 1, Host: "h", Port: 1}}
		back, err := ParseResponse(AppendResponse(nil, 1, fr)[4:], int16(kmsg.Fetch), v)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(back.(*kmsg.FetchResponse).Brokers); n != map[int16]int{15: 0, 16: 1}[v] {
			t.Fatalf("fetch v%d: %d node endpoints", v, n)
		}
	}

	snap := kmsg.NewPtrFetchSnapshotResponse()
	snap.SetVersion(0)
	snap.NodeEndpoints = []kmsg.FetchSnapshotResponseNodeEndpoint{{NodeID: 1, Host: "h", Port: 1}}
	back, err = ParseResponse(AppendResponse(nil, 1, snap)[4:], int16(kmsg.FetchSnapshot), 0)
	if err != nil || len(back.(*kmsg.FetchSnapshotResponse).NodeEndpoints) != 0 {
		t.Fatalf("fetch snapshot v0 carries endpoints: %v", err)
	}
}

// EncodeRequest writes one request at any version without touching it: the replica id
// goes where the version carries it and later tags are left out, as AppendRequest does
// for a request built at that version.
func TestEncodeRequestLeavesTheRequestAlone(t *testing.T) {
	req := raftFetch(18)
	for _, v := range []int16{12, 14, 15, 17, 18} {
		got, err := EncodeRequest([]byte("junk"), 1, nil, req, v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if want := append([]byte("junk"), AppendRequest(nil, 1, nil, raftFetch(v))...); !bytes.Equal(got, want) {
			t.Fatalf("v%d: %x, want %x", v, got, want)
		}
	}
	if req.Version != 18 || req.ReplicaID != -1 || req.ReplicaState.ID != 2 ||
		req.Topics[0].Partitions[0].ReplicaDirectoryID != [16]byte{0: 9} || req.Topics[0].Partitions[0].HighWatermark != 8 {
		t.Fatalf("the request was modified: %+v", req)
	}

	// The id filled in the old field reaches a v15+ receiver in the replica state.
	old := raftFetch(18)
	old.ReplicaID, old.ReplicaState.ID = 2, -1
	frame, err := EncodeRequest(nil, 1, nil, old, 18)
	if err != nil {
		t.Fatal(err)
	}
	_, back, err := testApis.ParseRequest(frame[4:])
	if err != nil || back.(*kmsg.FetchRequest).ReplicaState.ID != 2 {
		t.Fatalf("v18 replica state %+v: %v", back.(*kmsg.FetchRequest).ReplicaState, err)
	}
	if old.ReplicaState.ID != -1 {
		t.Fatal("the request was modified")
	}
}

// A version that cannot carry a field whose value changes the request's meaning is
// refused, and so is one kmsg cannot encode; nothing is appended.
func TestEncodeRequestRefusesMeaningChangingDowngrade(t *testing.T) {
	vote := kmsg.NewPtrVoteRequest()
	vt := kmsg.NewVoteRequestTopic()
	vp := kmsg.NewVoteRequestTopicPartition()
	vp.PreVote = true
	vt.Partitions = []kmsg.VoteRequestTopicPartition{vp}
	vote.Topics = []kmsg.VoteRequestTopic{vt}
	fetch := raftFetch(18)
	for _, c := range []struct {
		req kmsg.Request
		v   int16
	}{{vote, 1}, {vote, 0}, {fetch, 11}, {fetch, 4}, {fetch, fetch.MaxVersion() + 1}, {fetch, -1}} {
		out, err := EncodeRequest([]byte("x"), 1, nil, c.req, c.v)
		if !errors.Is(err, kerr.UnsupportedVersion) || string(out) != "x" {
			t.Fatalf("%s v%d: %q, %v; want nothing appended and UNSUPPORTED_VERSION", kmsg.NameForKey(c.req.Key()), c.v, out, err)
		}
	}
	if _, err := EncodeRequest(nil, 1, nil, vote, 2); err != nil {
		t.Fatalf("pre-vote at v2: %v", err)
	}
	fetch.Topics[0].Partitions[0].LastFetchedEpoch = -1
	if _, err := EncodeRequest(nil, 1, nil, fetch, 11); err != nil {
		t.Fatalf("fetch without a last fetched epoch at v11: %v", err)
	}
}

// The tables name only fields that start above their api's first flexible version
// (others are kmsg's business), within the served range.
func TestVersionedFieldsTable(t *testing.T) {
	for _, fields := range [][]versionedField{taggedRequestFields, taggedResponseFields, meaningfulRequestFields} {
		for _, f := range fields {
			rng, ok := testServed.Versions(f.key)
			if !ok || f.since <= rng.Min || f.since > rng.Max {
				t.Errorf("%s %s since v%d: outside the served range %+v", kmsg.NameForKey(f.key), f.name, f.since, rng)
			}
		}
	}
	for _, fields := range [][]versionedField{taggedRequestFields, taggedResponseFields} {
		for _, f := range fields {
			if !IsFlexible(f.key, f.since-1) || f.reset == nil {
				t.Errorf("%s %s since v%d: v%d is not flexible, or no reset", kmsg.NameForKey(f.key), f.name, f.since, f.since-1)
			}
		}
	}
}

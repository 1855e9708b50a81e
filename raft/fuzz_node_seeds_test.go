package raft_test

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/topics"
)

// The seed corpus of FuzzNode (testdata/fuzz/FuzzNode) is written by
//
//	go test ./raft -run TestFuzzNodeCorpus -fuzznode.write
//
// from the scripts below; without the flag the test checks that the files
// on disk are what the scripts produce.
var fuzzNodeWrite = flag.Bool("fuzznode.write", false, "rewrite FuzzNode's seed corpus")

// fuzzScript builds a FuzzNode input.
type fuzzScript []byte

func (s fuzzScript) chunk(op byte, frame []byte) fuzzScript {
	s = append(s, op)
	s = binary.BigEndian.AppendUint16(s, uint16(len(frame)))
	return append(s, frame...)
}

// req sends a request frame at the highest version kraftd serves, or at
// version v when given.
func (s fuzzScript) req(r kmsg.Request, v ...int16) fuzzScript {
	vr, _ := testApis.Versions(r.Key())
	r.SetVersion(vr.Max)
	if len(v) > 0 {
		r.SetVersion(v[0])
	}
	return s.chunk(fuzzRequest, protocol.AppendRequest(nil, 7, nil, r)[4:])
}

// resp answers the newest request pending to peer (at the version a kraftd peer
// negotiates).
func (s fuzzScript) resp(peer int32, r kmsg.Response) fuzzScript {
	vr, _ := testApis.Versions(r.Key())
	r.SetVersion(vr.Max)
	return s.chunk(fuzzResponse+fuzzOps*byte(peer-2), protocol.AppendResponse(nil, 7, r)[4:])
}

func (s fuzzScript) rawReq(frame []byte) fuzzScript { return s.chunk(fuzzRequest, frame) }

func (s fuzzScript) rawResp(peer int32, frame []byte) fuzzScript {
	return s.chunk(fuzzResponse+fuzzOps*byte(peer-2), frame)
}

func (s fuzzScript) fail(peer int32) fuzzScript { return append(s, fuzzFailure+fuzzOps*byte(peer-2)) }

func (s fuzzScript) wait(ms uint16) fuzzScript {
	return binary.BigEndian.AppendUint16(append(s, fuzzAdvance), ms)
}

func (s fuzzScript) propose(n byte) fuzzScript { return append(s, fuzzAppend, n-1) }

// elect makes node 1 leader of epoch 1: its election timer fires within
// 2 s, voters 2 and 3 grant its pre-votes and 2 grants the vote.
func (s fuzzScript) elect() fuzzScript {
	return s.wait(2000).
		resp(2, voteResp(0, -1, true)).
		resp(3, voteResp(0, -1, true)).
		resp(2, voteResp(1, -1, true))
}

// follow makes node 1 follow voter 2 in epoch 5 with three committed
// records from it.
func (s fuzzScript) follow() fuzzScript {
	return s.req(beginReq(2, 5)).
		resp(2, fetchResp(2, 5, 3, dataBatch(0, 5, 3))).
		resp(2, fetchResp(2, 5, 3, nil))
}

func fuzzNodeSeeds() map[string]fuzzScript {
	maxEpoch := int32(math.MaxInt32)
	badCRC := dataBatch(3, 5, 2)
	badCRC[len(badCRC)-1] ^= 0xff
	wrongBase := dataBatch(1, 5, 2) // overlaps the log end
	describe := kmsg.NewPtrDescribeQuorumRequest()
	snap := kmsg.NewPtrFetchSnapshotRequest()
	snap.ClusterID = strp(testCluster)
	snap.ReplicaID = 2
	st := kmsg.NewFetchSnapshotRequestTopic()
	st.Topic = topics.ClusterMetadata
	sp := kmsg.NewFetchSnapshotRequestTopicPartition()
	sp.CurrentLeaderEpoch, sp.SnapshotID.EndOffset, sp.SnapshotID.Epoch, sp.Position = 1, 1, 1, math.MaxInt64
	st.Partitions = append(st.Partitions, sp)
	snap.Topics = append(snap.Topics, st)
	observerFetch := fetchReq(9, 1, 0, 0, math.MaxInt32)
	observerFetch.Topics[0].Partitions[0].ReplicaDirectoryID = [16]byte{9}
	return map[string]fuzzScript{
		"leader-serves-fetches": fuzzScript{}.elect().propose(3).
			req(fetchReq(2, 1, 0, 0, 0)).req(fetchReq(2, 1, 4, 1, 500)).propose(1).
			req(fetchReq(3, 1, 5, 1, 0)).req(observerFetch).req(describe).wait(1000),
		"leader-hostile-fetches": fuzzScript{}.elect().propose(2).
			req(fetchReq(2, 1, math.MaxInt64, 1, 0)).req(fetchReq(2, 1, 1, maxEpoch, 0)).
			req(fetchReq(3, maxEpoch, 0, 0, 0)).req(fetchReq(-5, 1, 0, 0, 0)).
			req(fetchReq(2, 1, 0, 0, -1)).req(snap).wait(3000),
		"leader-forged-claims": fuzzScript{}.elect().
			req(beginReq(2, 1)).req(endReq(1, 1, 2)).req(endReq(3, 1)).
			req(voteReq(1, 1, 0, 0, false)).req(voteReq(3, 1, 1, 1, true)).wait(1500),
		"follower-forged-claims": fuzzScript{}.follow().
			req(beginReq(3, 5)).req(beginReq(1, 5)).req(beginReq(2, 6)).
			req(endReq(1, 5)).req(endReq(2, 5, 1)).wait(100).
			resp(2, fetchResp(3, 5, 3, nil)).resp(2, fetchResp(1, 5, 9, nil)).wait(3000),
		"follower-truncation-below-hw": fuzzScript{}.follow().
			resp(2, fetchDiverging(2, 5, 0, 1)).resp(2, fetchResp(2, 4, 3, nil)).
			resp(2, fetchResp(2, 5, 1, nil)).wait(500),
		"max-epochs": fuzzScript{}.req(beginReq(2, maxEpoch)).
			req(voteReq(3, maxEpoch, 0, 0, true)).req(endReq(2, maxEpoch, 1)).wait(5000).
			resp(2, voteResp(maxEpoch, -1, true)).wait(3000),
		// Once a node persisted epoch MaxInt32 its next election overflowed:
		// now the claim is refused at the edge.
		"max-epoch-then-election": fuzzScript{}.req(beginReq(2, maxEpoch)).wait(2500).
			resp(2, voteResp(maxEpoch, 2, true)).resp(3, voteResp(maxEpoch, 2, true)),
		"malformed-fetched-batches": fuzzScript{}.follow().
			resp(2, fetchResp(2, 5, 5, badCRC)).
			resp(2, fetchResp(2, 5, 5, wrongBase)).
			resp(2, fetchResp(2, 5, 5, []byte{0, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff})).wait(200),
		"garbage-frames": fuzzScript{}.rawReq(nil).rawReq([]byte{0, 52, 0, 2}).
			rawReq([]byte{0, 52, 0, 99, 0, 0, 0, 1, 0xff, 0xff, 0}).
			rawReq(append(protocol.AppendRequest(nil, 1, nil, voteReq(2, 1, 0, 0, true))[4:], 0xde, 0xad)).
			wait(2000).rawResp(2, []byte{0, 0, 0}).rawResp(3, []byte{0, 0, 0, 7, 0xff}).fail(2).wait(2000),
	}
}

// fetchDiverging is a leader's answer telling the follower its log
// diverges after endOffset of epoch.
func fetchDiverging(leader, epoch int32, endOffset int64, divergingEpoch int32) *kmsg.FetchResponse {
	r := fetchResp(leader, epoch, 3, nil)
	p := &r.Topics[0].Partitions[0]
	p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = divergingEpoch, endOffset
	return r
}

// TestFuzzNodeCorpus keeps the seed files in step with fuzzNodeSeeds.
func TestFuzzNodeCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzNode")
	for name, script := range fuzzNodeSeeds() {
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", []byte(script))
		path := filepath.Join(dir, name)
		if *fuzzNodeWrite {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is not what fuzzNodeSeeds builds (err %v): run go test ./raft -run TestFuzzNodeCorpus -fuzznode.write", path, err)
		}
	}
}

package raft_test

// Golden interaction tests (testdata/interaction/*.txt, cockroachdb/datadriven)
// in the manner of etcd-io/raft's: real Drivers step through a scripted
// scenario and the expected output lists every message sent, every
// quorum-state write and every state change, so the file reads as the
// protocol. Regenerate with
//
//	go test ./raft -run Interaction -rewrite
//
// and commit the new output only after reading the diff: a golden file that
// records a bug is a defect.
//
// Commands (node ids are the positional arguments):
//
//	add-nodes 3 [voters=(1,2,3)] [pre-vote=false] [dynamic|observer|dirs] [defer]
//	                                    create and start nodes (dirs: static voters with directory ids;
//	                                    defer: Config.DeferLeadership)
//	prefer 3 leaders=(1,2)              Driver.SetPreferredLeaders on node 3
//	tick 1 [2 ...] 2s                   move those nodes' clocks and poll them
//	advance 500ms                       move every clock, poll every node
//	deliver-msgs [2] [from=1] [type=Vote]  deliver the queued matching messages (not their consequences)
//	drop-msgs [2] [from=1] [type=Vote]  drop them (the waiting node gets an error answer)
//	corrupt-msgs 2                      forge the last batch of queued FetchResponses to 2
//	stabilize                           deliver until nothing is queued
//	msgs                                list the queued messages
//	propose 1 a b                       Append records a and b on leader 1
//	resign 1 / shutdown 1               Driver.Resign (current epoch) / Driver.Shutdown
//	crash 2 / restart 2                 lose unflushed log data, keep quorum state / start a new driver
//	partition 1 | 2 3 / heal            cut the network between groups / undo it
//	raw-request 2 from=1 BeginQuorumEpoch epoch=5 leader=1
//	                                    step a hand-made request (Vote, BeginQuorumEpoch,
//	                                    EndQuorumEpoch, Fetch, AddRaftVoter voter=4 [port=P]
//	                                    [no-ack], RemoveRaftVoter voter=4, UpdateRaftVoter
//	                                    voter=2 epoch=1 port=P, UpdateFeatures level=1
//	                                    [feature=F] [type=T] [validate-only]) into 2, printing
//	                                    its answer (a voter change's or upgrade's once it completes)
//	snapshot 1                          snapshot node 1 at its high watermark, drop the log before it
//	status [1 ...] / log 1              quorum view and persisted state / the log's batches
//	_breakpoint                         no-op, a place for a debugger breakpoint

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		if filepath.Ext(path) != ".txt" {
			return
		}
		e := newIEnv(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			e.out.Reset()
			e.handle(t, d)
			if e.out.Len() == 0 {
				return "ok\n"
			}
			return e.out.String()
		})
	})
}

func (e *ienv) handle(t *testing.T, d *datadriven.TestData) {
	switch d.Cmd {
	case "add-nodes":
		e.handleAddNodes(t, d)
	case "tick":
		ids, dur := e.idsAndDuration(t, d)
		for _, id := range ids {
			n := e.upNode(t, d, id)
			n.now = n.now.Add(dur)
			e.printf("> %d ticks %v (t=%v)", id, dur, n.now.Sub(e.start))
			n.poll()
		}
	case "advance":
		_, dur := e.idsAndDuration(t, d)
		for _, n := range e.nodes {
			n.now = n.now.Add(dur)
			if n.up {
				e.printf("> %d ticks %v (t=%v)", n.id, dur, n.now.Sub(e.start))
				n.poll()
			}
		}
	case "deliver-msgs", "drop-msgs":
		e.handleMsgs(t, d, d.Cmd == "drop-msgs")
	case "stabilize":
		for i := 0; len(e.queue) > 0; i++ {
			if i == 10000 {
				d.Fatalf(t, "not stable after %d deliveries", i)
			}
			m := e.queue[0]
			e.queue = e.queue[1:]
			e.deliver(m)
		}
	case "msgs":
		for _, m := range e.queue {
			e.printf("%s", describeEnvelope(m))
		}
	case "propose":
		e.handlePropose(t, d)
	case "prefer":
		e.handlePrefer(t, d)
	case "resign":
		n := e.upNode(t, d, e.ids(t, d)[0])
		e.printf("> %d resigns epoch %d", n.id, n.drv.Status().Epoch)
		if err := n.drv.Resign(n.now, n.drv.Status().Epoch); err != nil {
			e.effect("%d resign: %v", n.id, err)
		}
		n.poll()
	case "shutdown":
		n := e.upNode(t, d, e.ids(t, d)[0])
		e.printf("> %d shuts down", n.id)
		n.drv.Shutdown(n.now)
		n.poll()
	case "crash":
		for _, id := range e.ids(t, d) {
			e.upNode(t, d, id).crash()
		}
	case "restart":
		for _, id := range e.ids(t, d) {
			n := e.node(id)
			if n == nil || n.up {
				d.Fatalf(t, "node %d is not crashed", id)
			}
			e.printf("> %d restarts (log end=%d)", id, n.log.EndOffset().Offset)
			n.startDriver()
		}
	case "partition":
		e.groups = map[int32]int{}
		g := 0
		for _, a := range d.CmdArgs {
			if a.Key == "|" {
				g++
				continue
			}
			e.groups[e.parseID(t, d, a.Key)] = g
		}
	case "heal":
		e.groups = nil
	case "raw-request":
		e.handleRawRequest(t, d)
	case "corrupt-msgs":
		e.handleCorrupt(t, d)
	case "snapshot":
		e.handleSnapshot(t, d)
	case "status":
		ids := e.ids(t, d)
		if len(ids) == 0 {
			for _, n := range e.nodes {
				ids = append(ids, n.id)
			}
		}
		for _, id := range ids {
			e.printStatus(e.node(id))
		}
	case "log":
		n := e.node(e.ids(t, d)[0])
		data, err := n.log.Read(n.log.StartOffset(), 1<<30)
		if err != nil {
			d.Fatalf(t, "read log: %v", err)
		}
		e.printf("%d log start=%d end=%d flushed=%d %s", n.id, n.log.StartOffset(), n.log.EndOffset().Offset, n.log.FlushedOffset(), describeBatches(data))
	case "describe-quorum":
		e.handleDescribeQuorum(t, d)
	case "_breakpoint":
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
}

func (e *ienv) handleAddNodes(t *testing.T, d *datadriven.TestData) {
	count := int32(e.parseID(t, d, d.CmdArgs[0].Key))
	first := int32(1)
	if len(e.nodes) > 0 {
		first = e.nodes[len(e.nodes)-1].id + 1
	}
	var voters []int32
	preVote, deferring := true, false
	dyn := static
	for _, a := range d.CmdArgs[1:] {
		switch a.Key {
		case "defer":
			deferring = true
		case "dynamic":
			// Formatted --initial-controllers: a bootstrap snapshot with
			// the voters, bootstrap servers instead of static voters.
			dyn = dynamicVoter
		case "observer":
			// Formatted --no-initial-controllers, bootstrap servers only.
			dyn = dynamicObserver
		case "dirs":
			// controller.quorum.voters, with a directory id in
			// meta.properties as Kafka's format always writes.
			dyn = staticWithDirs
		case "voters":
			for _, v := range a.Vals {
				voters = append(voters, e.parseID(t, d, v))
			}
		case "pre-vote":
			d.ScanArgs(t, "pre-vote", &preVote)
		default:
			d.Fatalf(t, "add-nodes: unknown argument %q", a.Key)
		}
	}
	if voters == nil && dyn == dynamicObserver {
		d.Fatalf(t, "add-nodes observer: name the voters (voters=(...))")
	}
	if voters == nil {
		for id := int32(1); id < first+count; id++ {
			voters = append(voters, id)
		}
	}
	// All nodes exist before any starts, so first sends find their peer.
	var added []*inode
	for id := first; id < first+count; id++ {
		n := e.addNode(id, voters, preVote, dyn)
		n.cfg.DeferLeadership = deferring
		added = append(added, n)
	}
	for _, n := range added {
		e.printf("> %d starts", n.id)
		n.startDriver()
	}
}

// handlePrefer tells nodes which voters can lead the state machine.
func (e *ienv) handlePrefer(t *testing.T, d *datadriven.TestData) {
	var leaders []int32
	var ids []int32
	for _, a := range d.CmdArgs {
		if a.Key == "leaders" {
			for _, v := range a.Vals {
				leaders = append(leaders, e.parseID(t, d, v))
			}
			continue
		}
		ids = append(ids, e.parseID(t, d, a.Key))
	}
	for _, id := range ids {
		n := e.upNode(t, d, id)
		e.printf("> %d prefers leaders %v", id, leaders)
		if err := n.drv.SetPreferredLeaders(n.now, leaders); err != nil {
			e.effect("%d prefer: %v", id, err)
		}
		n.poll()
	}
}

// handleMsgs delivers or drops the queued messages matching the filters,
// in queue order. Messages they cause are queued, not delivered.
func (e *ienv) handleMsgs(t *testing.T, d *datadriven.TestData, drop bool) {
	to := e.ids(t, d)
	from, typ := int32(-1), ""
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "from":
			from = e.parseID(t, d, a.Vals[0])
		case "type":
			typ = a.Vals[0]
		}
	}
	var picked, rest []*envelope
	for _, m := range e.queue {
		name := m.api
		if m.req != nil {
			name = msgName(m.req)
		} else if m.resp != nil {
			name = msgName(m.resp)
		}
		if (len(to) == 0 || slices.Contains(to, m.to)) && (from < 0 || m.from == from) && (typ == "" || typ == name) {
			picked = append(picked, m)
		} else {
			rest = append(rest, m)
		}
	}
	e.queue = rest
	for _, m := range picked {
		if !drop {
			e.deliver(m)
			continue
		}
		e.printf("> dropped %s", describeEnvelope(m))
		if m.err == nil {
			e.queue = append(e.queue, failure(m, errITimedOut))
		}
	}
}

func describeEnvelope(m *envelope) string {
	switch {
	case m.err != nil:
		return fmt.Sprintf("%d->%d %s failed: %v", m.to, m.from, m.api, m.err)
	case m.req != nil:
		return fmt.Sprintf("%d->%d %s", m.from, m.to, describeMsg(m.req))
	}
	return fmt.Sprintf("%d->%d %s", m.from, m.to, describeMsg(m.resp))
}

func (e *ienv) handlePropose(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.parseID(t, d, d.CmdArgs[0].Key))
	var recs [][]byte
	for _, a := range d.CmdArgs[1:] {
		recs = append(recs, []byte(a.Key))
	}
	st := n.drv.Status()
	e.printf("> %d appends %s in epoch %d", n.id, describeRecords(false, recs), st.Epoch)
	last, err := n.drv.Append(n.now, st.Epoch, recs)
	if err != nil {
		e.effect("%d append: %v", n.id, err)
	} else {
		e.effect("%d append: last offset %d", n.id, last)
	}
	n.poll()
}

// handleRawRequest steps a hand-made request into a node, as if a peer
// (possibly a confused or malicious one) had sent it.
func (e *ienv) handleRawRequest(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.parseID(t, d, d.CmdArgs[0].Key))
	var from int32
	d.ScanArgs(t, "from", &from)
	api := d.CmdArgs[2].Key
	num := func(key string, def int) int32 {
		if !d.HasArg(key) {
			return int32(def)
		}
		var v int
		d.ScanArgs(t, key, &v)
		return int32(v)
	}
	var req kmsg.Request
	switch api {
	case "Vote":
		req = voteReq(num("candidate", int(from)), num("epoch", 0), num("last-epoch", 0), int64(num("last-offset", 0)), d.HasArg("pre-vote"))
	case "BeginQuorumEpoch":
		req = beginReq(num("leader", int(from)), num("epoch", 0))
	case "EndQuorumEpoch":
		var succ []int32
		if d.HasArg("successors") {
			for _, a := range d.CmdArgs {
				if a.Key == "successors" {
					for _, v := range a.Vals {
						succ = append(succ, e.parseID(t, d, v))
					}
				}
			}
		}
		req = endReq(num("leader", int(from)), num("epoch", 0), succ...)
	case "Fetch":
		req = fetchReq(num("replica", int(from)), num("epoch", 0), int64(num("offset", 0)), num("last-fetched-epoch", 0), num("max-wait", 0))
	case "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter":
		req = voterChangeReq(api, num("voter", 0), num("epoch", 0), num("port", 0), d.HasArg("no-ack"))
	case "UpdateFeatures":
		feature := features.KRaftVersionName
		if d.HasArg("feature") {
			d.ScanArgs(t, "feature", &feature)
		}
		req = updateFeaturesReq(feature, int16(num("level", 1)), int8(num("type", 1)), d.HasArg("validate-only"))
	default:
		d.Fatalf(t, "raw-request: unsupported api %q", api)
	}
	req, err := roundTripRequest(req)
	if err != nil {
		d.Fatalf(t, "raw-request: %v", err)
	}
	e.printf("> %d->%d %s (raw)", from, n.id, describeMsg(req))
	n.step(raft.Message{Request: req, Ref: &iref{from: from, raw: true}})
}

// handleCorrupt forges the last batch of every queued FetchResponse to the
// given nodes, as a broken or hostile leader would: last offset delta -5
// under a valid CRC.
func (e *ienv) handleCorrupt(t *testing.T, d *datadriven.TestData) {
	to := e.ids(t, d)
	for _, m := range e.queue {
		r, ok := m.resp.(*kmsg.FetchResponse)
		if !ok || !slices.Contains(to, m.to) || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			continue
		}
		p := &r.Topics[0].Partitions[0]
		data := bytes.Clone(p.RecordBatches)
		last := -1
		for pos := 0; pos < len(data); {
			h, err := protocol.ParseBatchHeader(data[pos:])
			if err != nil {
				break
			}
			last, pos = pos, pos+h.Size()
		}
		if last < 0 {
			continue
		}
		p.RecordBatches = append(data[:last], reseal(data[last:], offLastOffsetDelta, uint32(0xfffffffb))...)
		e.printf("> corrupted %s", describeEnvelope(m))
	}
}

// handleSnapshot writes a snapshot of node n at its high watermark and lets
// the log drop what the snapshot covers, as log cleaning would.
func (e *ienv) handleSnapshot(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.parseID(t, d, d.CmdArgs[0].Key))
	hw := n.drv.Status().HighWatermark
	id, ok := snapshotID(n.log, hw)
	if !ok {
		d.Fatalf(t, "node %d has no committed batch ending at its high watermark %d", n.id, hw)
	}
	w, err := n.log.CreateSnapshot(id)
	if err != nil {
		d.Fatalf(t, "create snapshot: %v", err)
	}
	_, _ = fmt.Fprintf(w, "state of node %d at %s", n.id, offEpoch(id.Offset, id.Epoch))
	if err := w.Freeze(); err != nil {
		d.Fatalf(t, "freeze snapshot: %v", err)
	}
	before := n.log.StartOffset()
	n.log.DeleteBeforeSnapshot()
	e.printf("> %d snapshots at %s; log start %d -> %d", n.id, offEpoch(id.Offset, id.Epoch), before, n.log.StartOffset())
}

// snapshotID names a snapshot ending at offset end: the epoch is that of
// the batch holding the last record it covers, which must end there.
func snapshotID(log *rafttest.MemLog, end int64) (raft.OffsetAndEpoch, bool) {
	data, err := log.Read(log.StartOffset(), 1<<30)
	if err != nil {
		return raft.OffsetAndEpoch{}, false
	}
	for len(data) > 0 {
		h, err := protocol.ParseBatchHeader(data)
		if err != nil {
			return raft.OffsetAndEpoch{}, false
		}
		if h.NextOffset() == end {
			return raft.OffsetAndEpoch{Offset: end, Epoch: h.PartitionLeaderEpoch}, true
		}
		data = data[h.Size():]
	}
	return raft.OffsetAndEpoch{}, false
}

func (e *ienv) printStatus(n *inode) {
	st, _ := n.store.State()
	if !n.up {
		e.printf("%d down; persisted epoch=%d leader=%s voted=%s", n.id, st.Epoch, idName(st.LeaderID), idName(st.VotedID))
		return
	}
	s := n.drv.Status()
	e.printf("%d %s epoch=%d leader=%s voted=%s hw=%d end=%d; persisted epoch=%d leader=%s voted=%s",
		n.id, s.Role, s.Epoch, idName(s.LeaderID), idName(s.VotedID), s.HighWatermark, s.LogEndOffset,
		st.Epoch, idName(st.LeaderID), idName(st.VotedID))
}

// ids returns the positional node ids of a command.
func (e *ienv) ids(t *testing.T, d *datadriven.TestData) []int32 {
	var ids []int32
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			if _, err := strconv.Atoi(a.Key); err == nil {
				ids = append(ids, e.parseID(t, d, a.Key))
			}
		}
	}
	return ids
}

// idsAndDuration parses "1 2 500ms": node ids, then one duration.
func (e *ienv) idsAndDuration(t *testing.T, d *datadriven.TestData) ([]int32, time.Duration) {
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "%s: missing duration", d.Cmd)
	}
	last := d.CmdArgs[len(d.CmdArgs)-1].Key
	dur, err := time.ParseDuration(last)
	if err != nil {
		d.Fatalf(t, "%s: bad duration %q", d.Cmd, last)
	}
	return e.ids(t, d), dur
}

func (e *ienv) parseID(t *testing.T, d *datadriven.TestData, s string) int32 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		d.Fatalf(t, "bad node id %q", s)
	}
	return int32(v)
}

func (e *ienv) upNode(t *testing.T, d *datadriven.TestData, id int32) *inode {
	n := e.node(id)
	if n == nil || !n.up {
		d.Fatalf(t, "node %d is not running", id)
	}
	return n
}

// dynamicMode is how add-nodes formats and configures a node.
type dynamicMode int

const (
	static          dynamicMode = iota // controller.quorum.voters, kraft.version 0
	staticWithDirs                     // the same, with directory ids
	dynamicVoter                       // bootstrap snapshot with the voters, bootstrap servers
	dynamicObserver                    // no snapshot, bootstrap servers
)

// testDir is node id's directory id in dynamic scripts.
func testDir(id int32) [16]byte { return [16]byte{0: byte(id), 15: 0xd1} }

// voterChangeReq is an admin's AddRaftVoter / RemoveRaftVoter, or a
// voter's UpdateRaftVoter, for node voter (directory testDir, listener
// CONTROLLER at 127.0.0.1:port, 9000+voter when port is 0).
func voterChangeReq(api string, voter, epoch, port int32, noAck bool) kmsg.Request {
	if port == 0 {
		port = 9000 + voter
	}
	switch api {
	case "AddRaftVoter":
		r := kmsg.NewPtrAddRaftVoterRequest()
		r.ClusterID = strp(testCluster)
		r.VoterID, r.VoterDirectoryID = voter, testDir(voter)
		l := kmsg.NewAddRaftVoterRequestListener()
		l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(port)
		r.Listeners = append(r.Listeners, l)
		r.AckWhenCommitted = !noAck
		return r
	case "RemoveRaftVoter":
		r := kmsg.NewPtrRemoveRaftVoterRequest()
		r.ClusterID = strp(testCluster)
		r.VoterID, r.VoterDirectoryID = voter, testDir(voter)
		return r
	}
	r := kmsg.NewPtrUpdateRaftVoterRequest()
	r.ClusterID = strp(testCluster)
	r.CurrentLeaderEpoch = epoch
	r.VoterID, r.VoterDirectoryID = voter, testDir(voter)
	l := kmsg.NewUpdateRaftVoterRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", uint16(port)
	r.Listeners = append(r.Listeners, l)
	r.KRaftVersionFeature.MinSupportedVersion, r.KRaftVersionFeature.MaxSupportedVersion = 0, 1
	return r
}

// updateFeaturesReq is kafka-features' UpdateFeatures v2 for one feature.
func updateFeaturesReq(feature string, level int16, typ int8, validateOnly bool) kmsg.Request {
	r := kmsg.NewPtrUpdateFeaturesRequest()
	r.Version = 2
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = feature, level, typ
	r.FeatureUpdates = append(r.FeatureUpdates, u)
	r.ValidateOnly = validateOnly
	return r
}

// writeTestBootstrapSnapshot writes the 0-0 snapshot kafka-storage format
// --initial-controllers writes for voters (port 9000+id, directory testDir).
func writeTestBootstrapSnapshot(t *testing.T, l *rafttest.MemLog, voters []int32) {
	var ics []storage.InitialController
	for _, v := range voters {
		ics = append(ics, storage.InitialController{NodeID: v, Host: "127.0.0.1", Port: uint16(9000 + v),
			DirectoryID: uuid.UUID(testDir(v))})
	}
	w, err := l.CreateSnapshot(raft.OffsetAndEpoch{})
	if err == nil {
		_, err = w.Write(storage.BootstrapSnapshot(1, ics, "CONTROLLER", nil, time.Unix(0, 0)))
	}
	if err == nil {
		err = w.Freeze()
	}
	if err != nil {
		t.Fatalf("bootstrap snapshot: %v", err)
	}
}

// handleDescribeQuorum prints node id's DescribeQuorum v2 answer: replica
// keys with directory ids, end offsets, and the voters' listeners.
func (e *ienv) handleDescribeQuorum(t *testing.T, d *datadriven.TestData) {
	n := e.upNode(t, d, e.ids(t, d)[0])
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topics.ClusterMetadata
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp := n.drv.DescribeQuorum(n.now, req)
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			e.printf("%d DescribeQuorum err=%s leader=%s epoch=%d hw=%d", n.id, errName(p.ErrorCode), idName(p.LeaderID), p.LeaderEpoch, p.HighWatermark)
			for _, r := range p.CurrentVoters {
				e.effect("voter %d%s end=%d", r.ReplicaID, dirName(r.ReplicaDirectoryID), r.LogEndOffset)
			}
			for _, r := range p.Observers {
				e.effect("observer %d%s end=%d", r.ReplicaID, dirName(r.ReplicaDirectoryID), r.LogEndOffset)
			}
		}
	}
	for _, nd := range resp.Nodes {
		for _, l := range nd.Listeners {
			e.effect("node %d %s %s:%d", nd.NodeID, l.Name, l.Host, l.Port)
		}
	}
}

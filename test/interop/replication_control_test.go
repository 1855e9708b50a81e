package interop

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// controlCase is one operation on a cluster, for kraftd's
// controller/replication and Kafka 4.4.0's ReplicationControlManager
// (testdata/KafkaReplicationControl.java) alike.
type controlCase struct {
	Op            string            `json:"op"`
	Seed          int64             `json:"seed"`
	NumPartitions int32             `json:"numPartitions"`
	RF            int16             `json:"rf"`
	Static        map[string]string `json:"static"`
	Records       []string          `json:"records"`
	Version       int16             `json:"version"`
	Request       string            `json:"request"`
	// DeleteDisabled is delete.topic.enable=false.
	DeleteDisabled bool `json:"deleteDisabled"`

	recs []replication.Record
	req  kmsg.Request
}

type controlAnswer struct {
	Response string   `json:"response"`
	Records  []string `json:"records"`
	Fail     string   `json:"fail"`
}

// kafkaReplicationControl runs the cases through Kafka's managers.
func kafkaReplicationControl(t *testing.T, cases []*controlCase) []controlAnswer {
	t.Helper()
	var in bytes.Buffer
	for _, c := range cases {
		c.Records = c.Records[:0]
		for _, r := range c.recs {
			b, err := metadata.Append(nil, r.Record, r.Version)
			if err != nil {
				t.Fatalf("%T: %v", r.Record, err)
			}
			c.Records = append(c.Records, hex.EncodeToString(b))
		}
		c.Version = c.req.GetVersion()
		c.Request = hex.EncodeToString(c.req.AppendTo(nil))
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
	}
	out, stderr := runJava(t, "KafkaReplicationControl", &in)
	var answers []controlAnswer
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "R ") {
			continue
		}
		var a controlAnswer
		if err := json.Unmarshal([]byte(line[2:]), &a); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(cases) {
		t.Fatalf("%d answers to %d cases\n%s", len(answers), len(cases), stderr)
	}
	return answers
}

// clusterGen builds a random cluster as records: a metadata.version, ELR
// on or off, brokers (fenced, shutting down, racks, directories, some
// cordoned), topics with partitions in any consistent state, and topic and
// cluster configs.
type clusterGen struct {
	r       *rand.Rand
	level   metadata.Level
	elr     bool
	brokers []*metadata.RegisterBrokerRecord
	dirs    map[int32][][16]byte
	topics  []genTopic
	recs    []replication.Record
}

type genTopic struct {
	name  string
	id    uuid.UUID
	parts []*metadata.PartitionRecord
}

var genTopicNames = []string{"a", "b", "orders", "my.topic", "my_topic", "x.y_z", "events-1", "t", "logs"}

func (g *clusterGen) add(rec metadata.Record) {
	v, ok := g.level.RecordVersion(rec.APIKey())
	if !ok {
		panic(fmt.Sprintf("%T at level %d", rec, g.level))
	}
	g.recs = append(g.recs, replication.Record{Record: rec, Version: v})
}

func newClusterGen(r *rand.Rand) *clusterGen {
	g := &clusterGen{r: r, dirs: map[int32][][16]byte{}}
	levels := []metadata.Level{metadata.MinLevel, 14, 17, 20, 23, 26, 30, metadata.LatestProductionLevel, metadata.LatestProductionLevel}
	g.level = levels[r.IntN(len(levels))]
	g.add(&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(g.level)})
	if g.level.Has(metadata.GateElr) && r.IntN(3) > 0 {
		g.elr = true
		g.add(&metadata.FeatureLevelRecord{Name: "eligible.leader.replicas.version", FeatureLevel: 1})
	}
	n := 1 + r.IntN(7)
	used := map[int32]bool{}
	racks := []string{"r1", "r2", "r3"}
	useRacks := r.IntN(2) == 0
	for len(g.brokers) < n {
		id := int32(r.IntN(12))
		if used[id] {
			continue
		}
		used[id] = true
		b := metadata.NewRegisterBrokerRecord()
		b.BrokerId, b.BrokerEpoch = id, int64(10+r.IntN(90))
		b.IncarnationId = uuid.UUID{1, byte(id)}
		b.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "h", Port: uint16(9000 + id), SecurityProtocol: 0}}
		b.Fenced = r.IntN(4) == 0
		if g.level.Has(metadata.GateMigration) && !b.Fenced {
			b.InControlledShutdown = r.IntN(8) == 0
		}
		if useRacks && r.IntN(5) > 0 {
			rack := racks[r.IntN(len(racks))]
			b.Rack = &rack
		}
		if g.level.Has(metadata.GateDirectoryAssignment) {
			for k := range r.IntN(3) {
				b.LogDirs = append(b.LogDirs, [16]byte{0: 0xd, 1: byte(id), 15: byte(10 + k)})
			}
			if g.level.Has(metadata.GateCordonedLogDirs) && len(b.LogDirs) > 0 && r.IntN(8) == 0 {
				b.CordonedLogDirs = b.LogDirs[:1]
			}
		}
		g.dirs[id] = b.LogDirs
		g.brokers = append(g.brokers, b)
		g.add(b)
	}
	if r.IntN(3) == 0 {
		g.add(&metadata.ConfigRecord{ResourceType: 4, ResourceName: "", Name: "min.insync.replicas", Value: strPtr(fmt.Sprint(1 + r.IntN(3)))})
	}
	for range r.IntN(4) {
		name := genTopicNames[r.IntN(len(genTopicNames))]
		if g.topic(name) != nil || g.collides(name) {
			continue
		}
		g.addTopic(name)
	}
	return g
}

func strPtr(s string) *string { return &s }

func (g *clusterGen) topic(name string) *genTopic {
	for i := range g.topics {
		if g.topics[i].name == name {
			return &g.topics[i]
		}
	}
	return nil
}

func (g *clusterGen) collides(name string) bool {
	norm := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	for _, t := range g.topics {
		if norm(t.name) == norm(name) {
			return true
		}
	}
	return false
}

func (g *clusterGen) addTopic(name string) {
	r := g.r
	t := genTopic{name: name, id: uuid.UUID{0x77, byte(len(g.topics) + 1), byte(r.IntN(256)), 9: 1}}
	g.add(&metadata.TopicRecord{Name: name, TopicId: t.id})
	if r.IntN(3) == 0 {
		g.add(&metadata.ConfigRecord{ResourceType: 2, ResourceName: name, Name: "min.insync.replicas", Value: strPtr(fmt.Sprint(1 + r.IntN(3)))})
	}
	if r.IntN(4) == 0 {
		g.add(&metadata.ConfigRecord{ResourceType: 2, ResourceName: name, Name: "unclean.leader.election.enable", Value: strPtr("true")})
	}
	rf := 1 + r.IntN(min(len(g.brokers), 4))
	for p := range 1 + r.IntN(4) {
		perm := r.Perm(len(g.brokers))[:rf]
		rec := metadata.NewPartitionRecord()
		rec.PartitionId, rec.TopicId = int32(p), t.id
		for _, i := range perm {
			rec.Replicas = append(rec.Replicas, g.brokers[i].BrokerId)
		}
		for _, b := range rec.Replicas {
			if r.IntN(4) > 0 {
				rec.Isr = append(rec.Isr, b)
			}
		}
		rec.RemovingReplicas, rec.AddingReplicas = []int32{}, []int32{}
		rec.Leader = -1
		if len(rec.Isr) > 0 && r.IntN(6) > 0 {
			rec.Leader = rec.Isr[r.IntN(len(rec.Isr))]
		}
		if len(rec.Isr) == 1 && rec.Leader >= 0 && r.IntN(6) == 0 {
			rec.LeaderRecoveryState = 1
		}
		rec.LeaderEpoch, rec.PartitionEpoch = int32(r.IntN(5)), int32(r.IntN(8))
		if g.level.Has(metadata.GateElr) && g.elr && r.IntN(3) == 0 {
			for _, b := range rec.Replicas {
				if !hasInt32(rec.Isr, b) && r.IntN(2) == 0 {
					rec.EligibleLeaderReplicas = append(rec.EligibleLeaderReplicas, b)
				}
			}
			if len(rec.Isr) == 0 && len(rec.EligibleLeaderReplicas) == 0 && r.IntN(2) == 0 {
				rec.LastKnownElr = []int32{rec.Replicas[0]}
			}
		}
		if g.level.Has(metadata.GateDirectoryAssignment) {
			for _, b := range rec.Replicas {
				d := [16]byte(placement.DirUnassigned)
				switch dirs := g.dirs[b]; {
				case len(dirs) > 0 && r.IntN(4) > 0:
					d = dirs[r.IntN(len(dirs))]
				case r.IntN(6) == 0:
					d = [16]byte(placement.DirLost)
				case r.IntN(6) == 0:
					d = [16]byte{0xe, 15: 1} // a directory that went offline
				case len(dirs) == 0:
					d = [16]byte(placement.DirMigrating)
				}
				rec.Directories = append(rec.Directories, d)
			}
		}
		t.parts = append(t.parts, rec)
		g.add(rec)
	}
	g.topics = append(g.topics, t)
}

func hasInt32(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// image replays the cluster's records.
func (g *clusterGen) image(t *testing.T, recs []replication.Record) *image.Image {
	b := image.NewBuilder(image.Empty(), image.Options{})
	for i, r := range recs {
		if err := b.Replay(int64(i), 1, r.Record, r.Version); err != nil {
			t.Fatalf("replay %T: %v", r.Record, err)
		}
	}
	return b.Image()
}

// kraftdAnswer runs a case through controller/replication. ids are the
// topic ids Kafka drew, handed out in the same order (Kafka draws them
// from an unseeded source).
func kraftdAnswer(t *testing.T, c *controlCase, ids []uuid.UUID) controlAnswer {
	g := &clusterGen{}
	return kraftdStep(t, c, g.image(t, c.recs), placement.NewJavaRandom(c.Seed), ids)
}

// kraftdStep runs a case's request on an image with a placer's random
// source.
func kraftdStep(t *testing.T, c *controlCase, im *image.Image, rnd placement.Random, ids []uuid.UUID) controlAnswer {
	settings := replication.DefaultSettings()
	settings.DefaultNumPartitions, settings.DefaultReplicationFactor, settings.Static = c.NumPartitions, c.RF, c.Static
	settings.DeleteTopicEnable = !c.DeleteDisabled
	op := replication.Op{
		Image: im, APIVersion: c.req.GetVersion(), Settings: settings,
		Random:       rnd,
		ShuttingDown: func(*image.Broker) bool { return false },
		NewUUID: func() uuid.UUID {
			if len(ids) == 0 {
				return uuid.UUID{0xee, 15: 0xee}
			}
			id := ids[0]
			ids = ids[1:]
			return id
		},
	}
	var recs []replication.Record
	var resp kmsg.Response
	if c.Op == "balance" || c.Op == "unclean" {
		// The periodic tasks answer whether to run again, carried as an
		// ElectLeaders response's error code.
		task := replication.BalanceLeaders
		if c.Op == "unclean" {
			task = replication.ElectUncleanLeaders
		}
		var more bool
		recs, more = task(op)
		r := kmsg.NewPtrElectLeadersResponse()
		r.Version = c.req.GetVersion()
		if more {
			r.ErrorCode = 1
		}
		resp = r
	}
	switch req := c.req.(type) {
	case *kmsg.CreateTopicsRequest:
		res := replication.CreateTopics(op, req, nil)
		recs, resp = res.Records, res.Response
	case *kmsg.AlterPartitionRequest:
		res := replication.AlterPartition(op, req)
		recs, resp = res.Records, res.Response
	case *kmsg.CreatePartitionsRequest:
		res := replication.CreatePartitions(op, req)
		recs, resp = res.Records, res.Response
	case *kmsg.ElectLeadersRequest:
		if resp != nil {
			break
		}
		res := replication.ElectLeaders(op, req)
		recs, resp = res.Records, res.Response
	case *kmsg.AllocateProducerIDsRequest:
		res := replication.AllocateProducerIDs(op, req)
		recs, resp = res.Records, res.Response
	case *kmsg.DeleteTopicsRequest:
		res := replication.DeleteTopics(op, im, req, nil)
		recs, resp = res.Records, res.Response
	case *kmsg.AssignReplicasToDirsRequest:
		res := replication.AssignReplicasToDirs(op, req)
		recs, resp = res.Records, res.Response
	}
	a := controlAnswer{Response: hex.EncodeToString(resp.AppendTo(nil))}
	if _, ok := c.req.(*kmsg.DeleteTopicsRequest); ok {
		a.Response = sortedDeletion(t, c.req, a.Response)
	}
	if e, ok := resp.(*kmsg.ElectLeadersResponse); ok && c.Op == "elect" && c.req.(*kmsg.ElectLeadersRequest).Topics == nil {
		a.Response = sortedElection(t, c.req, a.Response)
		_ = e
	}
	for _, r := range recs {
		b, err := metadata.Append(nil, r.Record, r.Version)
		if err != nil {
			t.Fatalf("%T: %v", r.Record, err)
		}
		a.Records = append(a.Records, hex.EncodeToString(b))
	}
	return a
}

// topicIDs are the ids of the TopicRecords among framed records.
func topicIDs(t *testing.T, frames []string) []uuid.UUID {
	var ids []uuid.UUID
	for _, f := range frames {
		b, _ := hex.DecodeString(f)
		rec, _, err := metadata.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if tr, ok := rec.(*metadata.TopicRecord); ok {
			ids = append(ids, tr.TopicId)
		}
	}
	return ids
}

func compareControl(t *testing.T, cases []*controlCase) {
	t.Helper()
	answers := kafkaReplicationControl(t, cases)
	for i, c := range cases {
		// Elections over all partitions follow Kafka's hash maps' order:
		// compared sorted.
		if req, ok := c.req.(*kmsg.ElectLeadersRequest); ok && req.Topics == nil && c.Op == "elect" && answers[i].Fail == "" {
			answers[i].Response = sortedElection(t, c.req, answers[i].Response)
			slices.Sort(answers[i].Records)
		}
		// The tasks walk Kafka's hash sets.
		if c.Op == "balance" || c.Op == "unclean" {
			slices.Sort(answers[i].Records)
		}
		// Kafka shuffles DeleteTopics' answers.
		if _, ok := c.req.(*kmsg.DeleteTopicsRequest); ok && answers[i].Fail == "" {
			answers[i].Response = sortedDeletion(t, c.req, answers[i].Response)
		}
	}
	failures := 0
	errorCodes := map[int16]int{}
	for i, c := range cases {
		want := answers[i]
		if want.Fail != "" {
			t.Fatalf("case %d: Kafka failed: %s", i, want.Fail)
		}
		ids := topicIDs(t, want.Records)
		if resp, ok := decodeResp(t, c.req, want.Response).(*kmsg.CreateTopicsResponse); ok && len(want.Records) == 0 {
			// validateOnly writes no records: the answer has the ids.
			ids = nil
			for _, x := range resp.Topics {
				if x.ErrorCode == 0 {
					ids = append(ids, x.TopicID)
				}
			}
		}
		got := kraftdAnswer(t, c, ids)
		if req, ok := c.req.(*kmsg.ElectLeadersRequest); ok && (req.Topics == nil || c.Op != "elect") {
			slices.Sort(got.Records)
		}
		if got.Response != want.Response || strings.Join(got.Records, ",") != strings.Join(want.Records, ",") {
			failures++
			if failures <= 3 {
				t.Errorf("case %d (%s v%d): %s\nrecords: %s\nkafka:  %s\n        %v\nkraftd: %s\n        %v", i, c.Op, c.Version, describeReq(c.req),
					describeRecs(c.recs), describeResp(t, c.req, want.Response), describeFrames(t, want.Records),
					describeResp(t, c.req, got.Response), describeFrames(t, got.Records))
			}
		}
		for _, code := range responseCodes(t, c.req, want.Response) {
			errorCodes[code]++
		}
	}
	if failures > 0 {
		t.Fatalf("%d of %d cases differ", failures, len(cases))
	}
	records := 0
	for _, a := range answers {
		records += len(a.Records)
	}
	t.Logf("%d cases, %d records; answers by error code: %v", len(cases), records, errorCodes)
}

func describeReq(r kmsg.Request) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func describeRecs(recs []replication.Record) string {
	var s []string
	for _, r := range recs {
		b, _ := json.Marshal(r.Record)
		s = append(s, fmt.Sprintf("%T%s", r.Record, b))
	}
	return strings.Join(s, "\n  ")
}

func describeFrames(t *testing.T, frames []string) string {
	var s []string
	for _, f := range frames {
		b, _ := hex.DecodeString(f)
		rec, v, err := metadata.Decode(b)
		if err != nil {
			s = append(s, "?"+f)
			continue
		}
		j, _ := json.Marshal(rec)
		s = append(s, fmt.Sprintf("%T v%d %s", rec, v, j))
	}
	return strings.Join(s, "\n        ")
}

func decodeResp(t *testing.T, req kmsg.Request, h string) kmsg.Response {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	b, _ := hex.DecodeString(h)
	if err := resp.ReadFrom(b); err != nil {
		t.Fatalf("decode response %s: %v", h, err)
	}
	return resp
}

func describeResp(t *testing.T, req kmsg.Request, h string) string {
	b, _ := json.Marshal(decodeResp(t, req, h))
	return string(b)
}

// errorCodes_ lists a response's error codes, one per item (or the
// top-level one), for the corpus's summary.
func responseCodes(t *testing.T, req kmsg.Request, h string) []int16 {
	var codes []int16
	switch resp := decodeResp(t, req, h).(type) {
	case *kmsg.CreateTopicsResponse:
		for _, x := range resp.Topics {
			codes = append(codes, x.ErrorCode)
		}
	case *kmsg.AlterPartitionResponse:
		if resp.ErrorCode != 0 {
			return []int16{resp.ErrorCode}
		}
		for _, x := range resp.Topics {
			for _, p := range x.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.CreatePartitionsResponse:
		for _, x := range resp.Topics {
			codes = append(codes, x.ErrorCode)
		}
	case *kmsg.ElectLeadersResponse:
		if resp.ErrorCode != 0 {
			return []int16{resp.ErrorCode}
		}
		for _, x := range resp.Topics {
			for _, p := range x.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.AllocateProducerIDsResponse:
		codes = append(codes, resp.ErrorCode)
	case *kmsg.DeleteTopicsResponse:
		for _, x := range resp.Topics {
			codes = append(codes, x.ErrorCode)
		}
	case *kmsg.AssignReplicasToDirsResponse:
		if resp.ErrorCode != 0 {
			return []int16{resp.ErrorCode}
		}
		for _, d := range resp.Directories {
			for _, x := range d.Topics {
				for _, p := range x.Partitions {
					codes = append(codes, p.ErrorCode)
				}
			}
		}
	}
	return codes
}

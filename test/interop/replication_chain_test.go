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
)

// controlChain is a cluster and requests run one after another on it, each
// on the state the previous ones' records left, all on one placer.
type controlChain struct {
	seed  int64
	recs  []replication.Record
	steps []controlStep
}

type controlStep struct {
	op  string
	req kmsg.Request
}

func randomChain(r *rand.Rand) controlChain {
	g := newClusterGen(r)
	c := controlChain{seed: r.Int64() - r.Int64(), recs: g.recs}
	var names []string
	for _, t := range g.topics {
		names = append(names, t.name)
	}
	next := 0
	for range 3 + r.IntN(5) {
		switch k := r.IntN(10); {
		case k < 4:
			req := kmsg.NewPtrCreateTopicsRequest()
			req.Version = 7
			for range 1 + r.IntN(3) {
				t := kmsg.NewCreateTopicsRequestTopic()
				t.Topic = fmt.Sprintf("c%d", next)
				next++
				t.NumPartitions, t.ReplicationFactor = int32(1+r.IntN(6)), int16(1+r.IntN(3))
				if r.IntN(4) == 0 {
					t.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "unclean.leader.election.enable", Value: strPtr("true")}}
				}
				req.Topics = append(req.Topics, t)
				names = append(names, t.Topic)
			}
			c.steps = append(c.steps, controlStep{"create", req})
		case k < 6 && len(names) > 0:
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.Version = 3
			req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: names[r.IntN(len(names))], Count: int32(2 + r.IntN(8))}}
			c.steps = append(c.steps, controlStep{"partitions", req})
		case k < 7:
			req := kmsg.NewPtrElectLeadersRequest()
			req.Version, req.ElectionType = 2, int8(r.IntN(2))
			c.steps = append(c.steps, controlStep{"elect", req})
		case k < 8 && len(names) > 0:
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.Version = 6
			i := r.IntN(len(names))
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: &names[i]}}
			names = append(names[:i:i], names[i+1:]...)
			c.steps = append(c.steps, controlStep{"delete", req})
		case k < 9:
			b := g.brokers[r.IntN(len(g.brokers))]
			c.steps = append(c.steps, controlStep{"pids", &kmsg.AllocateProducerIDsRequest{BrokerID: b.BrokerId, BrokerEpoch: b.BrokerEpoch}})
		default:
			op := []string{"balance", "unclean"}[r.IntN(2)]
			c.steps = append(c.steps, controlStep{op, kmsg.NewPtrElectLeadersRequest()})
		}
	}
	return c
}

func kafkaChains(t *testing.T, chains []controlChain) [][]controlAnswer {
	t.Helper()
	var in bytes.Buffer
	for _, c := range chains {
		cmd := map[string]any{"op": "chain", "seed": c.seed, "numPartitions": 1, "rf": 1, "static": map[string]string{}, "version": 0, "request": ""}
		var recs, steps []any
		for _, r := range c.recs {
			b, err := metadata.Append(nil, r.Record, r.Version)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, hex.EncodeToString(b))
		}
		for _, s := range c.steps {
			steps = append(steps, map[string]any{"op": s.op, "version": s.req.GetVersion(), "request": hex.EncodeToString(s.req.AppendTo(nil))})
		}
		cmd["records"], cmd["steps"] = recs, steps
		line, _ := json.Marshal(cmd)
		in.Write(line)
		in.WriteByte('\n')
	}
	cmd := javaProgram(t, "KafkaReplicationControl")()
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("KafkaReplicationControl: %v\n%s", err, stderr.Bytes())
	}
	var answers [][]controlAnswer
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "R ") {
			continue
		}
		var a struct {
			Steps []controlAnswer `json:"steps"`
			Fail  string          `json:"fail"`
		}
		if err := json.Unmarshal([]byte(line[2:]), &a); err != nil {
			t.Fatal(err)
		}
		if a.Fail != "" {
			t.Fatalf("Kafka failed: %s", a.Fail)
		}
		answers = append(answers, a.Steps)
	}
	if len(answers) != len(chains) {
		t.Fatalf("%d answers to %d chains\n%s", len(answers), len(chains), stderr.Bytes())
	}
	return answers
}

// Kafka 4.4.0's managers are the judge over chains of requests (topics
// created, grown, deleted, elections, the periodic tasks, producer ids),
// each on the state the previous records left and all drawing from one
// placer, as a controller's requests do: the same answers and records at
// every step.
func TestReplicationChainsAgainstKafka(t *testing.T) { compareChainsRandom(t, 400) }

func compareChainsRandom(t *testing.T, n int) {
	r := rand.New(rand.NewPCG(corpusSeed(t), 99))
	for n > 0 {
		var chains []controlChain
		for range min(n, 1000) {
			chains = append(chains, randomChain(r))
		}
		n -= len(chains)
		compareChainCases(t, chains)
	}
}

func compareChainCases(t *testing.T, chains []controlChain) {
	answers := kafkaChains(t, chains)
	steps, records := 0, 0
	for i, c := range chains {
		b := image.NewBuilder(image.Empty(), image.Options{})
		off := int64(0)
		replay := func(recs []replication.Record) {
			for _, r := range recs {
				if err := b.Replay(off, 1, r.Record, r.Version); err != nil {
					t.Fatalf("chain %d: replay %T: %v", i, r.Record, err)
				}
				off++
			}
		}
		replay(c.recs)
		rnd := placement.NewJavaRandom(c.seed)
		for k, s := range c.steps {
			want := answers[i][k]
			cc := &controlCase{Op: s.op, Seed: c.seed, NumPartitions: 1, RF: 1, Static: map[string]string{}, req: s.req}
			ids := topicIDs(t, want.Records)
			got := kraftdStep(t, cc, b.Image(), rnd, ids)
			if s.op == "balance" || s.op == "unclean" || s.op == "delete" {
				// Hash orders: compared as sets.
				slices.Sort(want.Records)
				slices.Sort(got.Records)
				if s.op == "delete" {
					want.Response = sortedDeletion(t, s.req, want.Response)
					got.Response = sortedDeletion(t, s.req, got.Response)
				}
			}
			if s.op == "elect" {
				want.Response = sortedElection(t, s.req, want.Response)
				got.Response = sortedElection(t, s.req, got.Response)
				slices.Sort(want.Records)
				slices.Sort(got.Records)
			}
			if got.Response != want.Response || strings.Join(got.Records, ",") != strings.Join(want.Records, ",") {
				t.Fatalf("chain %d step %d (%s): %s\nkafka:  %s\n        %s\nkraftd: %s\n        %s", i, k, s.op, describeReq(s.req),
					describeResp(t, s.req, want.Response), describeFrames(t, want.Records),
					describeResp(t, s.req, got.Response), describeFrames(t, got.Records))
			}
			var recs []replication.Record
			for _, f := range want.Records {
				raw, _ := hex.DecodeString(f)
				rec, v, err := metadata.Decode(raw)
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, replication.Record{Record: rec, Version: v})
			}
			replay(recs)
			steps++
			records += len(recs)
		}
	}
	t.Logf("%d chains, %d steps, %d records", len(chains), steps, records)
}

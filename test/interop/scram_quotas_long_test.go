//go:build interoplong

package interop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKraftdActiveScramAndQuotasLong: against a kraftd-only quorum (the active side on)
// with three Kafka 4.4.0 brokers, kafka-configs bootstrapped to a broker (which forwards
// AlterUserScramCredentials and AlterClientQuotas to kraftd in Envelopes) sets a SCRAM
// credential for alice and a producer quota for client c1, the brokers describe both from
// their images, then both are deleted. kafka-dump-log finds the four records kraftd wrote,
// and alice's stored and server keys are those of her password.
func TestKraftdActiveScramAndQuotasLong(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	K := kafkatest.SideKraftd
	q := env.NewMixedRaft(t, kafkatest.MixedRaftConfig{Sides: []kafkatest.Side{K, K, K}, Controllers: true,
		KraftdProps: kafkatest.Props{config.ActiveControllerKey: "true"}})
	for _, n := range q.Nodes {
		q.Start(n.ID)
	}
	leader, _, err := q.WaitLeader(0, activeBound)
	if err != nil {
		t.Fatal(err)
	}
	brokers := q.StartBrokers(101, 102, 103)
	t.Cleanup(func() { keepBrokerLogs(t, q, brokers...) })
	cl := kafkatest.NewClient(t, brokers[0].Addr, brokers[1].Addr, brokers[2].Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitBrokers(t, ctx, cl, []int32{101, 102, 103})

	bs := brokers[1].Addr
	configs := func(args ...string) string {
		t.Helper()
		out, err := env.RunTool(ctx, classConfigs, append([]string{"--bootstrap-server", bs}, args...)...)
		if err != nil {
			t.Fatalf("kafka-configs %v: %v\n%s", args, err, out)
		}
		return out
	}
	// The brokers describe from their images, which follow the commit.
	describe := func(entityType, want string, present bool) string {
		t.Helper()
		deadline := time.Now().Add(activeBound)
		for {
			out := configs("--describe", "--entity-type", entityType)
			if strings.Contains(out, want) == present {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("kafka-configs --describe --entity-type %s: %q present %v, want %v:\n%s", entityType, want, !present, present, out)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	out := configs("--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]")
	if !strings.Contains(out, "Completed updating config for user alice.") {
		t.Errorf("kafka-configs --alter users:\n%s", out)
	}
	describe("users", "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192", true)

	out = configs("--alter", "--entity-type", "clients", "--entity-name", "c1", "--add-config", "producer_byte_rate=1024")
	if !strings.Contains(out, "Completed updating config for client c1.") {
		t.Errorf("kafka-configs --alter clients:\n%s", out)
	}
	describe("clients", "Quota configs for client-id 'c1' are producer_byte_rate=1024.0", true)

	configs("--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "SCRAM-SHA-256")
	describe("users", "alice", false)
	configs("--alter", "--entity-type", "clients", "--entity-name", "c1", "--delete-config", "producer_byte_rate")
	describe("clients", "c1", false)

	// A deletion of what is gone: Kafka's RESOURCE_NOT_FOUND reaches the tool.
	if out, err := env.RunTool(ctx, classConfigs, "--bootstrap-server", bs, "--alter", "--entity-type", "users",
		"--entity-name", "alice", "--delete-config", "SCRAM-SHA-256"); err == nil ||
		!strings.Contains(err.Error()+out, "Attempt to delete a user credential that does not exist") {
		t.Errorf("deleting a missing credential: %v\n%s", err, out)
	}

	checkScramQuotaDump(t, env, q, leader)
}

// checkScramQuotaDump reads the leader's segments with kafka-dump-log: alice's
// UserScramCredentialRecord (keys derived from alice-secret with its salt) and
// RemoveUserScramCredentialRecord, c1's ClientQuotaRecord setting producer_byte_rate
// to 1024 and the one removing it.
func checkScramQuotaDump(t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, leader int32) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(q.Node(leader).PartitionDir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s", q.Node(leader).PartitionDir)
	}
	sort.Strings(segs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	type decoded struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	var seen []string
	for _, f := range files {
		for _, b := range f.Batches {
			for _, r := range b.Records {
				var d decoded
				payload, ok := strings.CutPrefix(r.Rest, "payload: ")
				if !ok || json.Unmarshal([]byte(payload), &d) != nil {
					continue
				}
				switch d.Type {
				case "USER_SCRAM_CREDENTIAL_RECORD":
					var c struct {
						Name                       string
						Mechanism                  int8
						Salt, StoredKey, ServerKey string
						Iterations                 int
					}
					if err := json.Unmarshal(d.Data, &c); err != nil {
						t.Fatalf("%s: %v", d.Data, err)
					}
					salt, _ := base64.StdEncoding.DecodeString(c.Salt)
					stored, _ := base64.StdEncoding.DecodeString(c.StoredKey)
					server, _ := base64.StdEncoding.DecodeString(c.ServerKey)
					want, err := security.NewScramCredential(security.MechScramSHA256, "alice-secret", salt, 8192)
					if err != nil {
						t.Fatal(err)
					}
					if c.Name != "alice" || c.Mechanism != 1 || c.Iterations != 8192 || len(salt) == 0 ||
						!bytes.Equal(stored, want.StoredKey) || !bytes.Equal(server, want.ServerKey) {
						t.Errorf("alice's credential: %s", d.Data)
					}
					seen = append(seen, "scram "+c.Name)
				case "REMOVE_USER_SCRAM_CREDENTIAL_RECORD":
					seen = append(seen, "remove scram "+string(d.Data))
				case "CLIENT_QUOTA_RECORD":
					seen = append(seen, "quota "+string(d.Data))
				}
			}
		}
	}
	want := []string{
		"scram alice",
		`quota {"entity":[{"entityType":"client-id","entityName":"c1"}],"key":"producer_byte_rate","value":1024.0,"remove":false}`,
		`remove scram {"name":"alice","mechanism":1}`,
		`quota {"entity":[{"entityType":"client-id","entityName":"c1"}],"key":"producer_byte_rate","value":0.0,"remove":true}`,
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the log's SCRAM and quota records:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

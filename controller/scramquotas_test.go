package controller_test

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/controllertest"
	"github.com/kraftd/kraftd/controller/quotas"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/security"
)

// lookupCluster is activeCluster whose controllers resolve only
// kafka.example.
func lookupCluster(t *testing.T) (*controllertest.Cluster, int32) {
	t.Helper()
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 1 << 20, Active: &controller.ActiveOptions{
		Cluster:    cluster.Settings{ClusterID: "test-cluster", SessionTimeout: 9 * time.Second},
		LookupHost: func(h string) bool { return h == "kafka.example" },
	}})
	c.Do("add-nodes", "3")
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	for range 3 {
		c.Do("stabilize")
	}
	lead := c.Leader()
	if lead < 0 {
		t.Fatal("no leader")
	}
	return c, lead
}

// AlterUserScramCredentials is answered once its records commit, and
// every node then holds the credential a SCRAM server checks clients
// against; refused alterations write nothing.
func TestActiveScramCredentials(t *testing.T) {
	c, lead := activeCluster(t)
	salted, err := pbkdf2.Key(sha256.New, "alice-secret", []byte("salt"), 8192, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = "alice", 1, 8192, []byte("salt"), salted
	req.Upsertions = append(req.Upsertions, up)
	var a answer
	c.Serve(lead, request(req, &a))
	if a.n != 0 {
		t.Fatalf("answered before the record committed: %+v", a)
	}
	c.Do("stabilize")
	c.Do("stabilize")
	if a.n != 1 || len(a.resp.(*kmsg.AlterUserSCRAMCredentialsResponse).Results) != 1 ||
		a.resp.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode != 0 {
		t.Fatalf("answer %+v", a)
	}
	want, err := security.NewScramCredential(security.MechScramSHA256, "alice-secret", []byte("salt"), 8192)
	if err != nil {
		t.Fatal(err)
	}
	for id := int32(1); id <= 3; id++ {
		cred, ok := c.App(id).Image().ScramCredential(1, "alice")
		if !ok || !bytes.Equal(cred.StoredKey, want.StoredKey) || !bytes.Equal(cred.ServerKey, want.ServerKey) || cred.Iterations != 8192 {
			t.Fatalf("node %d: credential %+v %v", id, cred, ok)
		}
	}

	// A missing credential and a twice-named user: refused, nothing written.
	before := c.App(lead).Image().Provenance().Offset
	req = kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, name := range []string{"bob", "alice", "alice"} {
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = name, 1
		req.Deletions = append(req.Deletions, d)
	}
	resp := serveCommitted(t, c, lead, req).(*kmsg.AlterUserSCRAMCredentialsResponse)
	codes := map[string]int16{}
	for _, r := range resp.Results {
		codes[r.User] = r.ErrorCode
	}
	if len(codes) != 2 || codes["bob"] != kerr.ResourceNotFound.Code || codes["alice"] != kerr.DuplicateResource.Code {
		t.Fatalf("answers %+v", resp.Results)
	}
	if after := c.App(lead).Image().Provenance().Offset; after != before {
		t.Fatalf("refusals wrote records: offset %d -> %d", before, after)
	}

	// Deleted.
	req.Deletions = req.Deletions[1:2]
	if r := serveCommitted(t, c, lead, req).(*kmsg.AlterUserSCRAMCredentialsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("deletion %+v", r.Results)
	}
	for id := int32(1); id <= 3; id++ {
		if _, ok := c.App(id).Image().ScramCredential(1, "alice"); ok {
			t.Fatalf("node %d: still has alice's credential", id)
		}
	}

	// Nothing to alter: answered at once.
	a = answer{}
	c.Serve(lead, request(kmsg.NewPtrAlterUserSCRAMCredentialsRequest(), &a))
	if a.n != 1 || len(a.resp.(*kmsg.AlterUserSCRAMCredentialsResponse).Results) != 0 {
		t.Fatalf("empty request answered %+v", a)
	}
}

func quotaEntry(typ string, name *string, key string, v float64, remove bool) kmsg.AlterClientQuotasRequestEntry {
	e := kmsg.NewAlterClientQuotasRequestEntry()
	ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
	ent.Type, ent.Name = typ, name
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value, op.Remove = key, v, remove
	e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
	return e
}

func quotasOf(c *controllertest.Cluster, id int32, typ string, name *string) map[string]float64 {
	return maps.Collect(c.App(id).Image().EntityQuotas(image.QuotaEntity{{Type: typ, Name: name}}))
}

// AlterClientQuotas sets and removes quotas on every node, once committed;
// validateOnly writes nothing; an ip entity's host name counts as resolved
// only through Prepare, on the active controller.
func TestActiveClientQuotas(t *testing.T) {
	c, lead := lookupCluster(t)
	c1 := "c1"
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Version = 1
	req.Entries = append(req.Entries, quotaEntry("client-id", &c1, "producer_byte_rate", 1024, false))
	if r := serveCommitted(t, c, lead, req).(*kmsg.AlterClientQuotasResponse); len(r.Entries) != 1 || r.Entries[0].ErrorCode != 0 {
		t.Fatalf("answer %+v", r)
	}
	for id := int32(1); id <= 3; id++ {
		if q := quotasOf(c, id, "client-id", &c1); len(q) != 1 || q["producer_byte_rate"] != 1024 {
			t.Fatalf("node %d: quotas %v", id, q)
		}
	}

	// Only validating: answered, nothing written.
	before := c.App(lead).Image().Provenance().Offset
	req.Entries[0] = quotaEntry("client-id", &c1, "producer_byte_rate", 2048, false)
	req.ValidateOnly = true
	if r := serveCommitted(t, c, lead, req).(*kmsg.AlterClientQuotasResponse); r.Entries[0].ErrorCode != 0 {
		t.Fatalf("validateOnly answered %+v", r)
	}
	if after := c.App(lead).Image().Provenance().Offset; after != before || quotasOf(c, lead, "client-id", &c1)["producer_byte_rate"] != 1024 {
		t.Fatalf("validateOnly wrote records: offset %d -> %d", before, after)
	}

	// Removed.
	req.ValidateOnly = false
	req.Entries[0] = quotaEntry("client-id", &c1, "producer_byte_rate", 0, true)
	serveCommitted(t, c, lead, req)
	for id := int32(1); id <= 3; id++ {
		if q := quotasOf(c, id, "client-id", &c1); len(q) != 0 {
			t.Fatalf("node %d: quotas %v after removal", id, q)
		}
	}

	// An ip entity by host name: resolved by Prepare on the leader only.
	host := "kafka.example"
	req.Entries[0] = quotaEntry("ip", &host, "connection_creation_rate", 5, false)
	for id := int32(1); id <= 3; id++ {
		if p := c.App(id).Prepare(req); (p != nil) != (id == lead) {
			t.Fatalf("node %d prepared %v", id, p)
		}
	}
	var a answer
	r := request(req, &a)
	c.Serve(lead, r)
	c.Do("stabilize")
	c.Do("stabilize")
	if a.n != 1 || a.resp.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unprepared host name answered %+v", a)
	}
	a = answer{}
	r.Prepared = c.App(lead).Prepare(req)
	c.Serve(lead, r)
	c.Do("stabilize")
	c.Do("stabilize")
	if a.n != 1 || a.resp.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode != 0 || quotasOf(c, lead, "ip", &host)["connection_creation_rate"] != 5 {
		t.Fatalf("prepared host name answered %+v", a)
	}

	// Too many records: refused whole; no entries: answered at once.
	big := kmsg.NewPtrAlterClientQuotasRequest()
	for i := range quotas.MaxRecords + 1 {
		u := fmt.Sprint("u", i)
		big.Entries = append(big.Entries, quotaEntry("user", &u, "producer_byte_rate", 1, false))
	}
	a = answer{}
	c.Serve(lead, request(big, &a))
	if a.n != 1 || a.code != kerr.PolicyViolation.Code {
		t.Fatalf("too many records answered %+v", a)
	}
	a = answer{}
	c.Serve(lead, request(kmsg.NewPtrAlterClientQuotasRequest(), &a))
	if a.n != 1 || a.resp == nil || len(a.resp.(*kmsg.AlterClientQuotasResponse).Entries) != 0 {
		t.Fatalf("empty request answered %+v", a)
	}
}

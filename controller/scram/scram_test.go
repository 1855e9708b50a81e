package scram

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/security"
)

// testImage is a cluster at level with alice's SHA-256 and bob's SHA-512
// credentials.
func testImage(t *testing.T, level metadata.Level) *image.Image {
	t.Helper()
	b := image.NewBuilder(image.Empty(), image.Options{})
	recs := []metadata.Record{
		&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(level)},
		&metadata.UserScramCredentialRecord{Name: "alice", Mechanism: SHA256, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096},
		&metadata.UserScramCredentialRecord{Name: "bob", Mechanism: SHA512, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096},
	}
	for i, r := range recs {
		if level < metadata.Level(11) && i > 0 {
			break // no SCRAM records before 3.5-IV2
		}
		if err := b.Replay(int64(i), 1, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	return b.Image()
}

func del(name string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	return kmsg.AlterUserSCRAMCredentialsRequestDeletion{Name: name, Mechanism: mech}
}

func up(name string, mech int8, iters int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	return kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: name, Mechanism: mech, Iterations: iters,
		Salt: []byte("salt"), SaltedPassword: []byte("salted password")}
}

// answer renders a result "user:code" or "user:code:message".
func answer(r kmsg.AlterUserSCRAMCredentialsResponseResult) string {
	s := fmt.Sprintf("%s:%d", r.User, r.ErrorCode)
	if r.ErrorMessage != nil {
		s += ":" + *r.ErrorMessage
	}
	return s
}

// record renders a record "+user/mech" (set) or "-user/mech" (removed).
func record(r metadata.Record) string {
	switch r := r.(type) {
	case *metadata.UserScramCredentialRecord:
		return fmt.Sprintf("+%s/%d", r.Name, r.Mechanism)
	case *metadata.RemoveUserScramCredentialRecord:
		return fmt.Sprintf("-%s/%d", r.Name, r.Mechanism)
	}
	return fmt.Sprintf("%T", r)
}

var (
	dupCode      = kerr.DuplicateResource.Code
	badCred      = kerr.UnacceptableCredential.Code
	badMech      = kerr.UnsupportedSaslMechanism.Code
	notFound     = kerr.ResourceNotFound.Code
	unsupported  = kerr.UnsupportedVersion.Code
	unknownError = kerr.UnknownServerError.Code
)

func TestAlter(t *testing.T) {
	type dels = []kmsg.AlterUserSCRAMCredentialsRequestDeletion
	type ups = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion
	noPassword := up("carol", SHA256, 4096)
	noPassword.SaltedPassword = nil
	noSalt := up("carol", SHA512, 4096)
	noSalt.Salt = nil
	for _, tc := range []struct {
		name    string
		level   metadata.Level
		dels    dels
		ups     ups
		answers []string
		records []string
	}{
		{name: "nothing"},
		{name: "upserted", ups: ups{up("carol", SHA256, 8192), up("dave", SHA512, 4096)},
			answers: []string{"carol:0", "dave:0"}, records: []string{"+carol/1", "+dave/2"}},
		{name: "replaced", ups: ups{up("alice", SHA256, 16384)}, answers: []string{"alice:0"}, records: []string{"+alice/1"}},
		{name: "deleted", dels: dels{del("alice", SHA256), del("bob", SHA512)},
			answers: []string{"bob:0", "alice:0"}, records: []string{"-bob/2", "-alice/1"}},
		{name: "empty user", dels: dels{del("", SHA256)}, ups: ups{up("", SHA256, 4096)},
			answers: []string{":" + fmt.Sprint(badCred) + ":Username must not be empty"}},
		{name: "empty user before mechanism", ups: ups{up("", 9, 4096)},
			answers: []string{":" + fmt.Sprint(badCred) + ":Username must not be empty"}},
		{name: "unknown mechanisms", dels: dels{del("alice", 0)}, ups: ups{up("carol", 3, 4096), up("dave", -1, 4096)},
			answers: []string{
				"carol:" + fmt.Sprint(badMech) + ":Unknown SCRAM mechanism",
				"dave:" + fmt.Sprint(badMech) + ":Unknown SCRAM mechanism",
				"alice:" + fmt.Sprint(badMech) + ":Unknown SCRAM mechanism"}},
		{name: "iteration bounds", ups: ups{up("a", SHA256, MinIterations-1), up("b", SHA256, MinIterations),
			up("c", SHA512, MaxIterations), up("d", SHA512, MaxIterations+1)},
			answers: []string{"b:0", "c:0", "a:" + fmt.Sprint(badCred) + ":Too few iterations", "d:" + fmt.Sprint(badCred) + ":Too many iterations"},
			records: []string{"+b/1", "+c/2"}},
		{name: "missing credential", dels: dels{del("carol", SHA256), del("bob", SHA256)},
			answers: []string{"carol:" + fmt.Sprint(notFound) + ":Attempt to delete a user credential that does not exist",
				"bob:" + fmt.Sprint(notFound) + ":Attempt to delete a user credential that does not exist"}},
		{name: "deleted twice", dels: dels{del("alice", SHA256), del("alice", SHA512), del("alice", SHA256)},
			answers: []string{"alice:" + fmt.Sprint(dupCode) + ":A user credential cannot be altered twice in the same request"}},
		{name: "deleted and upserted", dels: dels{del("alice", SHA256)}, ups: ups{up("alice", SHA512, 4096), up("carol", SHA256, 4096)},
			answers: []string{"carol:0", "alice:" + fmt.Sprint(dupCode) + ":A user credential cannot be altered twice in the same request"},
			records: []string{"+carol/1"}},
		{name: "upserted twice", ups: ups{up("carol", SHA256, 4096), up("carol", SHA512, 4096)},
			answers: []string{"carol:" + fmt.Sprint(dupCode) + ":A user credential cannot be altered twice in the same request"}},
		{name: "a failed user stays failed", dels: dels{del("carol", SHA256)}, ups: ups{up("carol", SHA256, 4096)},
			answers: []string{"carol:" + fmt.Sprint(notFound) + ":Attempt to delete a user credential that does not exist"}},
		{name: "empty salted password", ups: ups{noPassword, up("dave", SHA256, 4096)},
			answers: []string{"dave:0", "carol:" + fmt.Sprint(unknownError)}, records: []string{"+dave/1"}},
		{name: "empty salt", ups: ups{noSalt}, answers: []string{"carol:0"}, records: []string{"+carol/2"}},
		// A failed user is not looked at again: no duplicate reported.
		{name: "before SCRAM", level: 10, dels: dels{del("alice", SHA256), del("alice", SHA256)}, ups: ups{up("carol", SHA256, 4096)},
			answers: []string{
				"carol:" + fmt.Sprint(unsupported) + ":The current metadata.version does not support SCRAM",
				"alice:" + fmt.Sprint(unsupported) + ":The current metadata.version does not support SCRAM"}},
		// Java's HashMap order: by the names' hash buckets ("Aa" and "BB"
		// share bucket 0 and keep their insertion order, "a" is in 1), not
		// the request's.
		{name: "hash order", ups: ups{up("zed", SHA256, 4096), up("BB", SHA256, 4096), up("Aa", SHA256, 4096), up("a", SHA256, 4096)},
			answers: []string{"BB:0", "Aa:0", "a:0", "zed:0"}, records: []string{"+BB/1", "+Aa/1", "+a/1", "+zed/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			level := tc.level
			if level == 0 {
				level = metadata.LatestProductionLevel
			}
			req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			req.Deletions, req.Upsertions = tc.dels, tc.ups
			res := Alter(testImage(t, level), req)
			var answers, records []string
			for _, r := range res.Response.Results {
				answers = append(answers, answer(r))
			}
			for _, r := range res.Records {
				records = append(records, record(r))
			}
			if !slices.Equal(answers, tc.answers) || !slices.Equal(records, tc.records) {
				t.Fatalf("answers %q, records %q; want %q, %q", answers, records, tc.answers, tc.records)
			}
		})
	}
}

// The keys are RFC 5802's, as Kafka's ScramFormatter derives them: RFC
// 7677's example for SHA-256, and kraftd's own format --add-scram
// derivation for SHA-512.
func TestCredentialKeys(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	salted, err := pbkdf2.Key(sha256.New, "pencil", salt, 4096, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	u := kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: "user", Mechanism: SHA256, Iterations: 4096, Salt: salt, SaltedPassword: salted}
	rec, e := credentialRecord(&u)
	if e != nil {
		t.Fatal(e)
	}
	c := rec.(*metadata.UserScramCredentialRecord)
	if got := base64.StdEncoding.EncodeToString(c.StoredKey); got != "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=" {
		t.Errorf("stored key %s", got)
	}
	if got := base64.StdEncoding.EncodeToString(c.ServerKey); got != "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=" {
		t.Errorf("server key %s", got)
	}
	if c.Name != "user" || c.Iterations != 4096 || !bytes.Equal(c.Salt, salt) {
		t.Errorf("record %+v", c)
	}

	salted512, err := pbkdf2.Key(sha512.New, "secret", []byte("salt512"), 8192, sha512.Size)
	if err != nil {
		t.Fatal(err)
	}
	want, err := security.NewScramCredential(security.MechScramSHA512, "secret", []byte("salt512"), 8192)
	if err != nil {
		t.Fatal(err)
	}
	u = kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: "u", Mechanism: SHA512, Iterations: 8192, Salt: []byte("salt512"), SaltedPassword: salted512}
	rec, _ = credentialRecord(&u)
	c = rec.(*metadata.UserScramCredentialRecord)
	if !bytes.Equal(c.StoredKey, want.StoredKey) || !bytes.Equal(c.ServerKey, want.ServerKey) {
		t.Errorf("SHA-512 keys differ from format's")
	}
}

// The answer is of the request's version, with every result's user.
func TestAnswerShape(t *testing.T) {
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up(strings.Repeat("x", 300), SHA256, 4096)}
	res := Alter(testImage(t, metadata.LatestProductionLevel), req)
	if res.Response.Version != req.Version || len(res.Response.Results) != 1 || res.Response.Results[0].User != req.Upsertions[0].Name ||
		res.Response.Results[0].ErrorMessage != nil {
		t.Fatalf("answer %+v", res.Response)
	}
}

// collidingNames are n names with one String hash ("Aa" and "BB" hash
// alike), which a JVM keeps in one tree bin: hostile input must not make
// the order emulation quadratic (the test's timeout is the bound).
func collidingNames(bits int) []string {
	out := make([]string, 0, 1<<bits)
	for i := range 1 << bits {
		var b strings.Builder
		for j := range bits {
			if i>>j&1 == 0 {
				b.WriteString("Aa")
			} else {
				b.WriteString("BB")
			}
		}
		out = append(out, b.String())
	}
	return out
}

func TestManyCollidingUsers(t *testing.T) {
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, name := range collidingNames(16) {
		req.Upsertions = append(req.Upsertions, up(name, SHA256, 4096))
	}
	req.Deletions = append(req.Deletions, del(req.Upsertions[0].Name, SHA256))
	res := Alter(testImage(t, metadata.LatestProductionLevel), req)
	if n := len(req.Upsertions); len(res.Response.Results) != n || len(res.Records) != n-1 {
		t.Fatalf("%d answers, %d records for %d users", len(res.Response.Results), len(res.Records), n)
	}
}

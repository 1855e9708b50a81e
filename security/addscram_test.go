package security

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"strings"
	"testing"
)

// --add-scram arguments as Kafka 4.4's ScramParser reads them.
func TestParseAddScram(t *testing.T) {
	rec, err := ParseAddScram(`SCRAM-SHA-512=[name=alice,password=alice-secret]`)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScramStore()
	if ok, err := s.ApplyMetadataRecord(rec); !ok || err != nil {
		t.Fatalf("record not a UserScramCredentialRecord: %v", err)
	}
	c, ok := s.Get(MechScramSHA512, "alice")
	if !ok || c.Iterations != 4096 || len(c.Salt) == 0 {
		t.Fatalf("alice: %+v %v", c, ok)
	}
	// The same credential given as a salted password.
	salted, err := pbkdf2.Key(sha512.New, "alice-secret", c.Salt, 4096, sha512.Size)
	if err != nil {
		t.Fatal(err)
	}
	arg := `SCRAM-SHA-512=[name=alice,salt="` + base64.StdEncoding.EncodeToString(c.Salt) + `",iterations=4096,saltedpassword="` +
		base64.StdEncoding.EncodeToString(salted) + `"]`
	rec2, err := ParseAddScram(arg)
	if err != nil {
		t.Fatal(err)
	}
	s2 := NewScramStore()
	s2.ApplyMetadataRecord(rec2)
	c2, _ := s2.Get(MechScramSHA512, "alice")
	if string(c2.StoredKey) != string(c.StoredKey) || string(c2.ServerKey) != string(c.ServerKey) {
		t.Error("saltedpassword gives other keys than password")
	}
	for arg, want := range map[string]string{
		`SCRAM-SHA-512`:                                      "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-512'",
		`PLAIN=[name=a,password=b]`:                          "The add-scram mechanism PLAIN is not supported.",
		`SCRAM-SHA-256=name=a]`:                              "Expected configuration string to start with [",
		`SCRAM-SHA-256=[name=a`:                              "Expected configuration string to end with ]",
		`SCRAM-SHA-256=[password=b]`:                         "You must supply 'name' to add-scram",
		`SCRAM-SHA-256=[name=a]`:                             "You must supply one of 'password' or 'saltedpassword' to add-scram",
		`SCRAM-SHA-256=[name=a,saltedpassword=AAAA]`:         "You must supply 'salt' with 'saltedpassword' to add-scram",
		`SCRAM-SHA-256=[name=a,password=b,iterations=x]`:     "Failed to parse iterations count: x",
		`SCRAM-SHA-256=[name=a,password=b,iterations=10]`:    "The 'iterations' value must be >= 4096 for add-scram using SCRAM-SHA-256",
		`SCRAM-SHA-256=[name=a,password=b,iterations=99999]`: "The 'iterations' value must be <= 16384",
		`SCRAM-SHA-256=[name=a,password=b,zz=1,yy=2]`:        "Unknown SCRAM configurations: yy, zz",
		`SCRAM-SHA-256=[name=a,password=b,salt=!!]`:          "Failed to decode given salt: !!",
		`SCRAM-SHA-256=[name]`:                               "No equals sign found in SCRAM component: name",
	} {
		if _, err := ParseAddScram(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}

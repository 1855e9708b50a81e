package security

import (
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// scramMaxIterations is Kafka's ScramMechanism.maxIterations for both mechanisms.
const scramMaxIterations = 16384

// ParseAddScram reads one kafka-storage format --add-scram argument, as
// Kafka 4.4's ScramParser does, and returns the UserScramCredentialRecord
// value to write into the bootstrap snapshot:
//
//	SCRAM-SHA-512=[name=alice,password=alice-secret]
//	SCRAM-SHA-256=[name=bob,iterations=8192,salt="c2FsdA==",saltedpassword="..."]
//
// (salt and saltedpassword base64; iterations 4096 by default; a random
// salt when none is given). Errors use Kafka's words.
func ParseAddScram(arg string) ([]byte, error) {
	arg = strings.TrimSpace(arg)
	mechName, config, ok := strings.Cut(arg, "=")
	if !ok {
		return nil, fmt.Errorf("Failed to find equals sign in SCRAM argument '%s'", arg)
	}
	var mechType int8
	switch mechName {
	case MechScramSHA256:
		mechType = 1
	case MechScramSHA512:
		mechType = 2
	default:
		return nil, fmt.Errorf("The add-scram mechanism %s is not supported.", mechName)
	}
	if !strings.HasPrefix(config, "[") {
		return nil, errors.New("Expected configuration string to start with [")
	}
	if !strings.HasSuffix(config, "]") || len(config) < 2 {
		return nil, errors.New("Expected configuration string to end with ]")
	}
	comps := map[string]string{}
	for _, c := range strings.Split(config[1:len(config)-1], ",") {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			return nil, fmt.Errorf("No equals sign found in SCRAM component: %s", c)
		}
		if len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
			v = v[1 : len(v)-1]
		}
		comps[k] = v
	}
	take := func(k string) (string, bool) { v, ok := comps[k]; delete(comps, k); return v, ok }
	name, ok := take("name")
	if !ok {
		return nil, errors.New("You must supply 'name' to add-scram")
	}
	var salt []byte
	if s, ok := take("salt"); ok {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("Failed to decode given salt: %s", s)
		}
		salt = b
	}
	iterations := ScramMinIterations
	if s, ok := take("iterations"); ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("Failed to parse iterations count: %s", s)
		}
		iterations = int(n)
	}
	password, hasPassword := take("password")
	salted, hasSalted := take("saltedpassword")
	var saltedPassword []byte
	if !hasPassword {
		switch {
		case !hasSalted:
			return nil, errors.New("You must supply one of 'password' or 'saltedpassword' to add-scram")
		case salt == nil:
			return nil, errors.New("You must supply 'salt' with 'saltedpassword' to add-scram")
		}
		b, err := base64.StdEncoding.DecodeString(salted)
		if err != nil {
			return nil, fmt.Errorf("Failed to decode given saltedPassword: %s", salted)
		}
		saltedPassword = b
	}
	if len(comps) > 0 {
		keys := make([]string, 0, len(comps))
		for k := range comps {
			keys = append(keys, k)
		}
		slices.Sort(keys) // Kafka's TreeMap order
		return nil, fmt.Errorf("Unknown SCRAM configurations: %s", strings.Join(keys, ", "))
	}
	if iterations < ScramMinIterations {
		return nil, fmt.Errorf("The 'iterations' value must be >= %d for add-scram using %s", ScramMinIterations, mechName)
	}
	if iterations > scramMaxIterations {
		return nil, fmt.Errorf("The 'iterations' value must be <= %d for add-scram using %s", scramMaxIterations, mechName)
	}
	var c ScramCredential
	if saltedPassword != nil {
		c = credentialFromSalted(mechName, saltedPassword, salt, iterations)
	} else {
		var err error
		if c, err = NewScramCredential(mechName, password, salt, iterations); err != nil {
			return nil, err
		}
	}
	r := &metadata.UserScramCredentialRecord{Name: name, Mechanism: mechType, Salt: c.Salt, StoredKey: c.StoredKey,
		ServerKey: c.ServerKey, Iterations: int32(iterations)}
	return metadata.Append(nil, r, 0) // the type's only version
}

// credentialFromSalted derives the stored and server keys from a salted
// password given as is (RFC 5802: StoredKey = H(HMAC(SaltedPassword,
// "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key")).
func credentialFromSalted(mech string, saltedPassword, salt []byte, iterations int) ScramCredential {
	h, _ := scramHash(mech)
	newHash := func() hash.Hash { return h() }
	mac := func(msg string) []byte {
		m := hmac.New(newHash, saltedPassword)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	sum := newHash()
	sum.Write(mac("Client Key"))
	return ScramCredential{Salt: salt, StoredKey: sum.Sum(nil), ServerKey: mac("Server Key"), Iterations: int32(iterations)}
}

// Package scram decides AlterUserScramCredentials (api 51) as Kafka 4.4.0's
// ScramControlManager.alterCredentials does: the same validation order,
// error codes and messages, the UserScramCredentialRecords and
// RemoveUserScramCredentialRecords it writes, and the order of its answers
// and records, which follows Java's HashMap iteration (package
// controller/internal/jvmorder). It is pure: it reads the controller's
// working image and returns the records to append, as one atomic batch,
// with the answer to send once they commit. See docs/design/controller.md
// ("SCRAM credentials and client quotas").
package scram

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"hash"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// Kafka's bounds on a credential's iterations: ScramMechanism.minIterations
// (the same for both mechanisms) and ScramControlManager.MAX_ITERATIONS.
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// The mechanisms' type bytes (org.apache.kafka.clients.admin.ScramMechanism);
// any other byte is UNKNOWN.
const (
	SHA256 int8 = 1
	SHA512 int8 = 2
)

// Kafka's messages.
const (
	msgDuplicate     = "A user credential cannot be altered twice in the same request"
	msgUnsupported   = "The current metadata.version does not support SCRAM"
	msgEmptyUser     = "Username must not be empty"
	msgUnknownMech   = "Unknown SCRAM mechanism"
	msgTooFew        = "Too few iterations"
	msgTooMany       = "Too many iterations"
	msgNoSuchDeleted = "Attempt to delete a user credential that does not exist"
)

// Result is the decision: the records, in Kafka's order, to append as one
// batch (Kafka's ControllerResult.atomicOf), and the answer.
type Result struct {
	Records  []metadata.Record
	Response *kmsg.AlterUserSCRAMCredentialsResponse
}

// apiError is a user's error: Kafka's ApiError, a nil message being none.
type apiError struct {
	code int16
	msg  *string
}

func refuse(code int16, msg string) *apiError { return &apiError{code, &msg} }

// users is a java.util.HashMap<String, V>: its values in Kafka's iteration
// order, with removals.
type users[V any] struct {
	order *jvmorder.HashMap[string]
	vals  map[string]V
}

func newUsers[V any]() *users[V] {
	return &users[V]{order: jvmorder.NewHashMap[string](), vals: map[string]V{}}
}

func (u *users[V]) has(name string) bool { _, ok := u.vals[name]; return ok }

// put sets name's value; a name already there keeps its place.
func (u *users[V]) put(name string, v V) {
	u.order.Put(name, jvmorder.StringHash(name))
	u.vals[name] = v
}

func (u *users[V]) remove(name string) bool {
	if !u.has(name) {
		return false
	}
	delete(u.vals, name)
	u.order.Remove(name, jvmorder.StringHash(name))
	return true
}

func (u *users[V]) each(f func(name string, v V)) {
	for _, name := range u.order.Keys() {
		f(name, u.vals[name])
	}
}

// Alter decides req on the working image im. A request with neither
// deletions nor upsertions gets an empty answer (Kafka's QuorumController
// answers it without running the manager).
func Alter(im *image.Image, req *kmsg.AlterUserSCRAMCredentialsRequest) Result {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	res := Result{Response: resp}
	mv, _ := im.MetadataVersion()
	supported := mv.Has(metadata.GateScram)
	deletions := newUsers[*kmsg.AlterUserSCRAMCredentialsRequestDeletion]()
	upsertions := newUsers[*kmsg.AlterUserSCRAMCredentialsRequestUpsertion]()
	errs := newUsers[*apiError]()
	// A user named twice, by deletions or upsertions alike, fails whole;
	// once failed, later mentions are ignored.
	for i := range req.Deletions {
		d := &req.Deletions[i]
		switch {
		case errs.has(d.Name):
		case deletions.remove(d.Name):
			errs.put(d.Name, refuse(kerr.DuplicateResource.Code, msgDuplicate))
		case !supported:
			errs.put(d.Name, refuse(kerr.UnsupportedVersion.Code, msgUnsupported))
		default:
			if e := validateDeletion(im, d); e != nil {
				errs.put(d.Name, e)
			} else {
				deletions.put(d.Name, d)
			}
		}
	}
	for i := range req.Upsertions {
		u := &req.Upsertions[i]
		switch {
		case errs.has(u.Name):
		case deletions.remove(u.Name) || upsertions.remove(u.Name):
			errs.put(u.Name, refuse(kerr.DuplicateResource.Code, msgDuplicate))
		case !supported:
			errs.put(u.Name, refuse(kerr.UnsupportedVersion.Code, msgUnsupported))
		default:
			if e := validateUpsertion(u); e != nil {
				errs.put(u.Name, e)
			} else {
				upsertions.put(u.Name, u)
			}
		}
	}
	ok := func(user string) {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User = user
		resp.Results = append(resp.Results, r)
	}
	deletions.each(func(name string, d *kmsg.AlterUserSCRAMCredentialsRequestDeletion) {
		ok(name)
		res.Records = append(res.Records, &metadata.RemoveUserScramCredentialRecord{Name: name, Mechanism: d.Mechanism})
	})
	upsertions.each(func(name string, u *kmsg.AlterUserSCRAMCredentialsRequestUpsertion) {
		rec, e := credentialRecord(u)
		if e != nil {
			errs.put(name, e)
			return
		}
		ok(name)
		res.Records = append(res.Records, rec)
	})
	errs.each(func(name string, e *apiError) {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode, r.ErrorMessage = name, e.code, e.msg
		resp.Results = append(resp.Results, r)
	})
	return res
}

func validateUserAndMechanism(user string, mech int8) *apiError {
	if user == "" {
		return refuse(kerr.UnacceptableCredential.Code, msgEmptyUser)
	}
	if mech != SHA256 && mech != SHA512 {
		return refuse(kerr.UnsupportedSaslMechanism.Code, msgUnknownMech)
	}
	return nil
}

// validateDeletion: the credential must be in the working image.
func validateDeletion(im *image.Image, d *kmsg.AlterUserSCRAMCredentialsRequestDeletion) *apiError {
	if e := validateUserAndMechanism(d.Name, d.Mechanism); e != nil {
		return e
	}
	if _, ok := im.ScramCredential(d.Mechanism, d.Name); !ok {
		return refuse(kerr.ResourceNotFound.Code, msgNoSuchDeleted)
	}
	return nil
}

// validateUpsertion checks the name, the mechanism and the iterations; the
// salt and salted password are taken as they come.
func validateUpsertion(u *kmsg.AlterUserSCRAMCredentialsRequestUpsertion) *apiError {
	if e := validateUserAndMechanism(u.Name, u.Mechanism); e != nil {
		return e
	}
	switch {
	case u.Iterations < MinIterations:
		return refuse(kerr.UnacceptableCredential.Code, msgTooFew)
	case u.Iterations > MaxIterations:
		return refuse(kerr.UnacceptableCredential.Code, msgTooMany)
	}
	return nil
}

// credentialRecord derives the stored and server keys from the salted
// password as Kafka's ScramFormatter does (RFC 5802). An empty salted
// password is an HMAC key Java refuses ("Empty key"): Kafka answers that
// user UNKNOWN_SERVER_ERROR, without a message.
func credentialRecord(u *kmsg.AlterUserSCRAMCredentialsRequestUpsertion) (metadata.Record, *apiError) {
	if len(u.SaltedPassword) == 0 {
		return nil, &apiError{code: kerr.UnknownServerError.Code}
	}
	h := sha256.New
	if u.Mechanism == SHA512 {
		h = sha512.New
	}
	clientKey := mac(h, u.SaltedPassword, "Client Key")
	d := h()
	d.Write(clientKey)
	return &metadata.UserScramCredentialRecord{
		Name: u.Name, Mechanism: u.Mechanism, Salt: u.Salt,
		StoredKey: d.Sum(nil), ServerKey: mac(h, u.SaltedPassword, "Server Key"), Iterations: u.Iterations,
	}, nil
}

func mac(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Package quotas decides AlterClientQuotas (api 49) as Kafka 4.4.0's
// ClientQuotaControlManager.alterClientQuotas does, with the QuorumController
// and ControllerApis parts around it (an empty request answered at once,
// validateOnly dropping the records, the answer built from the manager's
// map): the same entity and value validation, error codes and messages, the
// ClientQuotaRecords it writes, and the order of its answers and records,
// which follows Java's HashMap iteration (package
// controller/internal/jvmorder). It is pure: it reads the controller's
// working image, and the only outside fact, whether a host name resolves,
// is handed in. See docs/design/controller.md ("SCRAM credentials and
// client quotas").
package quotas

import (
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// The entity types Kafka knows (ClientQuotaEntity.USER, CLIENT_ID, IP).
const (
	User     = "user"
	ClientID = "client-id"
	IP       = "ip"
)

// keyType is a quota key's ConfigDef type.
type keyType int

const (
	typeLong keyType = iota
	typeDouble
	typeInt
)

// userClientKeys are QuotaConfig.userAndClientQuotaConfigs(), ipKeys
// QuotaConfig.ipConfigs(), with their types in Kafka 4.4.0.
var (
	userClientKeys = map[string]keyType{
		"producer_byte_rate": typeLong, "consumer_byte_rate": typeLong,
		"request_percentage": typeDouble, "controller_mutation_rate": typeDouble,
	}
	ipKeys = map[string]keyType{"connection_creation_rate": typeInt}
)

// MaxRecords is Kafka's MAX_RECORDS_PER_USER_OP: a request writing more
// fails whole, POLICY_VIOLATION.
const MaxRecords = 10000

// Result is the decision: the records, in Kafka's order, to append as one
// batch (Kafka's ControllerResult.atomicOf; none when only validating),
// and the answer.
type Result struct {
	Records  []metadata.Record
	Response *kmsg.AlterClientQuotasResponse
}

// Error is a refusal of the whole request: every entry answers it, as
// Kafka's AlterClientQuotasRequest.getErrorResponse does.
type Error struct {
	Code    int16
	Message string
}

// errTooManyRecords is what Kafka's controller makes of the
// BoundedListTooLongException of a request past MaxRecords.
var errTooManyRecords = &Error{Code: kerr.PolicyViolation.Code, Message: "Unable to perform excessively large batch operation."}

// entity is one entry's entity as Kafka's AlterClientQuotasRequest.entries
// builds it: a HashMap of type to name (the last of a type counting),
// sized for the entry's list.
type entity struct {
	types []string // in the map's iteration order
	names map[string]*string
	key   string // canonical, for equality (ClientQuotaEntity.equals)
	hash  int32  // ClientQuotaEntity.hashCode
}

func newEntity(parts []kmsg.AlterClientQuotasRequestEntryEntity) *entity {
	e := &entity{names: map[string]*string{}}
	order := jvmorder.NewHashMapCap[string](len(parts))
	for _, p := range parts {
		order.Put(p.Type, jvmorder.StringHash(p.Type))
		e.names[p.Type] = p.Name
	}
	e.types = order.Keys()
	sorted := slices.Clone(e.types)
	slices.Sort(sorted)
	var b strings.Builder
	sum := int32(0) // AbstractMap.hashCode: the sum of key ^ value hashes
	for _, t := range sorted {
		n := e.names[t]
		b.WriteString(t)
		h := jvmorder.StringHash(t)
		if n == nil {
			b.WriteString("\x00-")
		} else {
			b.WriteString("\x00=" + *n)
			h ^= jvmorder.StringHash(*n)
		}
		b.WriteByte(0)
		sum += h
	}
	e.key, e.hash = b.String(), 31+sum // Objects.hash(entries)
	return e
}

// String is ClientQuotaEntity.toString.
func (e *entity) String() string {
	parts := make([]string, len(e.types))
	for i, t := range e.types {
		n := "null"
		if v := e.names[t]; v != nil {
			n = *v
		}
		parts[i] = t + "=" + n
	}
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

// result is one entity's answer: Kafka's ApiError, a nil message for none.
type result struct {
	entity *entity // the first entity put under this key (HashMap.put keeps it)
	code   int16
	msg    *string
}

// results is the manager's HashMap<ClientQuotaEntity, ApiError>.
type results struct {
	order *jvmorder.HashMap[string]
	byKey map[string]*result
}

func (r *results) has(e *entity) bool { _, ok := r.byKey[e.key]; return ok }

func (r *results) put(e *entity, code int16, msg *string) {
	r.order.Put(e.key, e.hash)
	if cur, ok := r.byKey[e.key]; ok {
		cur.code, cur.msg = code, msg
		return
	}
	r.byKey[e.key] = &result{entity: e, code: code, msg: msg}
}

func (r *results) refuse(e *entity, msg string) { r.put(e, kerr.InvalidRequest.Code, &msg) }

// Alter decides req on the working image im. lookup tells whether a host
// name that is not an IP literal resolves (Kafka's controller calls
// InetAddress.getByName); nil resolves none.
func Alter(im *image.Image, req *kmsg.AlterClientQuotasRequest, lookup func(host string) bool) (Result, *Error) {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	if len(req.Entries) == 0 {
		return Result{Response: resp}, nil
	}
	if lookup == nil {
		lookup = func(string) bool { return false }
	}
	out := &results{order: jvmorder.NewHashMap[string](), byKey: map[string]*result{}}
	var recs []metadata.Record
	for i := range req.Entries {
		entry := &req.Entries[i]
		e := newEntity(entry.Entity)
		// The ops by key (a HashMap sized for the list), nil removing.
		keys := jvmorder.NewHashMapCap[string](len(entry.Ops))
		values := map[string]*float64{}
		dup := false
		for _, op := range entry.Ops {
			if _, ok := values[op.Key]; ok {
				// Kafka records "Duplicate quota key", which the
				// duplicate entity message below then replaces.
				dup = true
				continue
			}
			keys.Put(op.Key, jvmorder.StringHash(op.Key))
			if op.Remove {
				values[op.Key] = nil
			} else {
				v := op.Value
				values[op.Key] = &v
			}
		}
		if dup || out.has(e) {
			out.refuse(e, "Ignoring duplicate entity "+e.String())
			continue
		}
		added := alterEntity(im, e, keys.Keys(), values, out, lookup)
		if len(recs)+len(added) > MaxRecords {
			return Result{}, errTooManyRecords
		}
		recs = append(recs, added...)
	}
	for _, k := range out.order.Keys() {
		r := out.byKey[k]
		o := kmsg.NewAlterClientQuotasResponseEntry()
		o.ErrorCode, o.ErrorMessage = r.code, r.msg
		o.Entity = []kmsg.AlterClientQuotasResponseEntryEntity{}
		for _, t := range r.entity.types {
			oe := kmsg.NewAlterClientQuotasResponseEntryEntity()
			oe.Type, oe.Name = t, r.entity.names[t]
			o.Entity = append(o.Entity, oe)
		}
		resp.Entries = append(resp.Entries, o)
	}
	if req.ValidateOnly {
		recs = nil
	}
	return Result{Records: recs, Response: resp}, nil
}

// alterEntity validates one entity and its ops (keys in Kafka's order) and
// returns its records; it puts the entity's answer in out.
func alterEntity(im *image.Image, e *entity, keys []string, values map[string]*float64, out *results, lookup func(string) bool) []metadata.Record {
	if len(e.types) == 0 {
		out.refuse(e, "Invalid empty client quota entity")
		return nil
	}
	// validateEntity, in the entity map's order; the validated map (a
	// HashMap(3)) orders the records' entity.
	validated := jvmorder.NewHashMapCap[string](3)
	for _, t := range e.types {
		if t != User && t != ClientID && t != IP {
			out.refuse(e, "Unhandled client quota entity type: "+t)
			return nil
		}
		validated.Put(t, jvmorder.StringHash(t))
		if n := e.names[t]; n != nil && *n == "" {
			out.refuse(e, "Empty "+t+" not supported")
			return nil
		}
	}
	// configKeysForEntityType: which combination, which keys.
	_, hasUser := e.names[User]
	_, hasClient := e.names[ClientID]
	ip, hasIP := e.names[IP]
	valid := userClientKeys
	if hasIP {
		if hasUser || hasClient {
			// Kafka's message lacks the space.
			out.refuse(e, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId")
			return nil
		}
		if ip != nil && !ValidIPEntity(*ip, lookup) {
			out.refuse(e, *ip+" is not a valid IP or resolvable host.")
			return nil
		}
		valid = ipKeys
	}
	var parts []metadata.ClientQuotaRecordEntityData
	var current image.QuotaEntity
	for _, t := range validated.Keys() {
		parts = append(parts, metadata.ClientQuotaRecordEntityData{EntityType: t, EntityName: e.names[t]})
		current = append(current, image.QuotaEntityPart{Type: t, Name: e.names[t]})
	}
	have := map[string]float64{}
	for k, v := range im.EntityQuotas(current) {
		have[k] = v
	}
	var recs []metadata.Record
	for _, k := range keys {
		v := values[k]
		if v == nil {
			if _, ok := have[k]; ok {
				recs = append(recs, &metadata.ClientQuotaRecord{Entity: slices.Clone(parts), Key: k, Remove: true})
			}
			continue
		}
		if msg := validateValue(valid, k, *v); msg != "" {
			out.refuse(e, msg)
			return nil
		}
		if cur, ok := have[k]; !ok || cur != *v {
			recs = append(recs, &metadata.ClientQuotaRecord{Entity: slices.Clone(parts), Key: k, Value: *v})
		}
	}
	out.put(e, 0, nil)
	return recs
}

// validateValue is validateQuotaKeyValue: the key must be one of the
// entity's, the value finite and positive, and whole for the integer keys
// (to within 1e-6), within the type's range. It returns the refusal's
// message, "" for none.
func validateValue(valid map[string]keyType, key string, v float64) string {
	typ, ok := valid[key]
	switch {
	case !ok:
		return "Invalid configuration key " + key
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "Quota " + key + " must be a finite number"
	case v <= 0:
		return "Quota " + key + " must be greater than 0"
	}
	switch typ {
	case typeInt:
		if v > math.MaxInt32 {
			return "Proposed value for " + key + " is too large for an INT."
		}
	case typeLong:
		if v > math.MaxInt64 { // as a double: 2^63
			return "Proposed value for " + key + " is too large for a LONG."
		}
	default:
		return ""
	}
	if math.Abs(math.Mod(v, 1)) > 1e-6 {
		return key + " cannot be a fractional value."
	}
	return ""
}

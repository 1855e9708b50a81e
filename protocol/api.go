package protocol

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Api is an api's registration, as every layer reads it: the layer that serves the api
// writes one beside its handler (the raft driver's, the network server's, the node's),
// and a Table assembled from them is what a node advertises, decodes and counts. The
// accessors let code that does not know the api's message types read what it needs.
type Api struct {
	Key kmsg.Key
	// Versions are the versions advertised in ApiVersions and decoded (ParseRequest);
	// kraftd sends the api at most at Versions.Max.
	Versions VersionRange
	// ClusterID reads a request's cluster id (nil for a null one); nil when the
	// request carries none.
	ClusterID func(kmsg.Request) *string
	// TopError points at a response's top-level error code, to read or set; nil when
	// kraftd reads none there (the answer's errors are then not counted either).
	TopError func(kmsg.Response) *int16
	// PartitionError is the first non-zero error code among a response's partitions;
	// nil when the response has none.
	PartitionError func(kmsg.Response) int16
	// ErrorResponse answers a request whose handling failed with code and the
	// exception's message msg, as Kafka's AbstractRequest.getErrorResponse does; nil
	// when kraftd never answers the api so.
	ErrorResponse func(req kmsg.Request, code int16, msg string) kmsg.Response
}

// Name is the api's name in Kafka's protocol ("Fetch").
func (a *Api) Name() string { return a.Key.Name() }

// ErrorCode is resp's error code as kraftd counts it: the top-level one, else the first
// non-zero one of a partition (the raft apis answer per partition).
func (a *Api) ErrorCode(resp kmsg.Response) int16 {
	if a.TopError != nil {
		if p := a.TopError(resp); p != nil && *p != 0 {
			return *p
		}
	}
	if a.PartitionError != nil {
		return a.PartitionError(resp)
	}
	return 0
}

// Typed builds an Api from accessors written against the api's own request and response
// types; the key is theirs, so a registration cannot name one api and read another.
type Typed[Req kmsg.Request, Resp kmsg.Response] struct {
	Versions       VersionRange
	ClusterID      func(Req) *string
	TopError       func(Resp) *int16
	PartitionError func(Resp) int16
}

// Api returns the registration. A message of another type reads as carrying nothing.
// It panics when Req and Resp are not one api's request and response.
func (t Typed[Req, Resp]) Api() Api {
	var req Req
	var resp Resp
	if req.Key() != resp.Key() {
		panic(fmt.Sprintf("protocol: %s request with a %s response", kmsg.NameForKey(req.Key()), kmsg.NameForKey(resp.Key())))
	}
	a := Api{Key: kmsg.Key(req.Key()), Versions: t.Versions}
	if f := t.ClusterID; f != nil {
		a.ClusterID = func(r kmsg.Request) *string {
			if r, ok := r.(Req); ok {
				return f(r)
			}
			return nil
		}
	}
	if f := t.TopError; f != nil {
		a.TopError = func(r kmsg.Response) *int16 {
			if r, ok := r.(Resp); ok {
				return f(r)
			}
			return nil
		}
	}
	if f := t.PartitionError; f != nil {
		a.PartitionError = func(r kmsg.Response) int16 {
			if r, ok := r.(Resp); ok {
				return f(r)
			}
			return 0
		}
	}
	return a
}

// FirstNonZero is the first non-zero value f gives for the partitions of topics, the zero
// value when none: a partitioned answer's first error code (PartitionError), or the first
// complaint about its partitions.
func FirstNonZero[T, P any, V comparable](topics []T, partitions func(*T) []P, f func(*P) V) V {
	var zero V
	for i := range topics {
		ps := partitions(&topics[i])
		for j := range ps {
			if v := f(&ps[j]); v != zero {
				return v
			}
		}
	}
	return zero
}

// MaxKey bounds api keys: tables indexed by key have this length (kmsg knows keys well
// below it).
const MaxKey = 128

// Table is the set of apis a node serves, one registration each, looked up by key
// without allocating. It is immutable once built and safe for concurrent use.
type Table struct {
	byKey [MaxKey]*Api
	apis  []*Api // ascending key
}

// NewTable assembles registrations into a table. It refuses an api registered twice, a
// key kmsg does not know and versions kmsg cannot encode.
func NewTable(lists ...[]Api) (*Table, error) {
	t := &Table{}
	for _, list := range lists {
		for i := range list {
			a := list[i] // a copy: the table's registrations cannot change after
			k := int16(a.Key)
			req := kmsg.RequestForKey(k)
			switch {
			case k < 0 || k >= MaxKey || req == nil:
				return nil, fmt.Errorf("protocol: api key %d is unknown to kmsg", k)
			case t.byKey[k] != nil:
				return nil, fmt.Errorf("protocol: %s (key %d) registered twice", a.Name(), k)
			case a.Versions.Min < 0 || a.Versions.Min > a.Versions.Max || a.Versions.Max > req.MaxVersion():
				return nil, fmt.Errorf("protocol: %s versions v%d-v%d outside kmsg's v0-v%d",
					a.Name(), a.Versions.Min, a.Versions.Max, req.MaxVersion())
			}
			t.byKey[k] = &a
			t.apis = append(t.apis, &a)
		}
	}
	slices.SortFunc(t.apis, func(a, b *Api) int { return int(a.Key) - int(b.Key) })
	return t, nil
}

// MustTable is NewTable for registrations fixed in code; it panics on an error.
func MustTable(lists ...[]Api) *Table {
	t, err := NewTable(lists...)
	if err != nil {
		panic(err)
	}
	return t
}

// Lookup returns the registration of key, nil when the table has none.
func (t *Table) Lookup(key int16) *Api {
	if key < 0 || key >= MaxKey {
		return nil
	}
	return t.byKey[key]
}

// Versions reports the versions the table lists for key.
func (t *Table) Versions(key int16) (VersionRange, bool) {
	if a := t.Lookup(key); a != nil {
		return a.Versions, true
	}
	return VersionRange{}, false
}

// Apis returns the registrations in ascending key order (ApiVersions order). The
// slice is the caller's; the registrations are shared and must not be modified.
func (t *Table) Apis() []*Api { return slices.Clone(t.apis) }

// Keys returns the keys of the table, ascending.
func (t *Table) Keys() []int16 {
	keys := make([]int16, len(t.apis))
	for i, a := range t.apis {
		keys[i] = int16(a.Key)
	}
	return keys
}

// ClusterID reads req's cluster id; ok is false when its api carries none.
func (t *Table) ClusterID(req kmsg.Request) (id *string, ok bool) {
	if req == nil {
		return nil, false
	}
	if a := t.Lookup(req.Key()); a != nil && a.ClusterID != nil {
		return a.ClusterID(req), true
	}
	return nil, false
}

// TopError is resp's top-level error code, 0 when its api has none the table reads (or
// resp is nil).
func (t *Table) TopError(resp kmsg.Response) int16 {
	if resp == nil {
		return 0
	}
	if a := t.Lookup(resp.Key()); a != nil && a.TopError != nil {
		if p := a.TopError(resp); p != nil {
			return *p
		}
	}
	return 0
}

// ErrorCode is resp's error code as kraftd counts it (Api.ErrorCode), 0 for an api the
// table does not list (or a nil resp).
func (t *Table) ErrorCode(resp kmsg.Response) int16 {
	if resp == nil {
		return 0
	}
	if a := t.Lookup(resp.Key()); a != nil {
		return a.ErrorCode(resp)
	}
	return 0
}

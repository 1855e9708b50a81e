package protocol

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is the only place kraftd turns a kmsg message into bytes. Every encoding
// goes through atVersion, which brings the message to the version it is written at
// (fields.go), so no caller has to know what a version carries.

// message is what kmsg requests and responses have in common.
type message interface {
	Key() int16
	GetVersion() int16
	SetVersion(int16)
	AppendTo([]byte) []byte
}

// EncodeRequest appends the size-prefixed frame of req at version v, whatever version
// req itself names (the version negotiated with the receiver). Fields v does not carry
// are left out, a Fetch's replica id goes where v carries it, and req is not modified:
// one request may be encoded for several receivers at once, at different versions.
//
// It appends nothing and returns an error wrapping kerr.UnsupportedVersion when kmsg
// cannot encode v, or when v cannot carry a field whose value changes what the request
// asks (a pre-vote below Vote v2, a LastFetchedEpoch below Fetch v12): Kafka's
// serializer refuses those downgrades too.
func EncodeRequest(dst []byte, corr int32, clientID *string, req kmsg.Request, v int16) ([]byte, error) {
	key := req.Key()
	if v < 0 || v > req.MaxVersion() {
		return dst, fmt.Errorf("protocol: %s v%d: kmsg encodes v0-v%d: %w", kmsg.NameForKey(key), v, req.MaxVersion(), kerr.UnsupportedVersion)
	}
	for _, f := range meaningfulRequestFields {
		if f.key == key && v < f.since && f.set(req) {
			return dst, fmt.Errorf("protocol: %s v%d cannot carry %s (v%d+): %w", kmsg.NameForKey(key), v, f.name, f.since, kerr.UnsupportedVersion)
		}
	}
	return appendRequest(dst, corr, clientID, req, v), nil
}

// AppendRequest appends the size-prefixed frame of req at its own version, for a
// request built or decoded at that version. As with EncodeRequest, fields the version
// does not carry are left out (not only the regular ones, as kmsg does, but the tagged
// ones too, which Kafka would reject) and req is not modified; unlike EncodeRequest it
// refuses nothing, the caller having chosen the version.
func AppendRequest(dst []byte, corr int32, clientID *string, req kmsg.Request) []byte {
	return appendRequest(dst, corr, clientID, req, req.GetVersion())
}

func appendRequest(dst []byte, corr int32, clientID *string, req kmsg.Request, v int16) []byte {
	req = atVersion(req, v, taggedRequestFields)
	dst, at := appendSizePlaceholder(dst)
	dst = AppendRequestHeader(dst, req.Key(), v, corr, clientID)
	dst = req.AppendTo(dst)
	return fillSize(dst, at)
}

// AppendResponse appends the size-prefixed frame of resp at resp.GetVersion(): header
// v0 for ApiVersions and for non-flexible versions, v1 (tag block) otherwise. Tagged
// fields the version does not carry (Vote v0 NodeEndpoints, Fetch below v16
// NodeEndpoints) are left out; resp is not modified.
func AppendResponse(dst []byte, corr int32, resp kmsg.Response) []byte {
	resp = atVersion(resp, resp.GetVersion(), taggedResponseFields)
	dst, at := appendSizePlaceholder(dst)
	dst = AppendResponseHeader(dst, resp.Key(), resp.GetVersion(), corr)
	dst = resp.AppendTo(dst)
	return fillSize(dst, at)
}

// atVersion returns m as version v carries it: m itself when that needs no change,
// else a shallow copy at version v with the Fetch replica id moved and the tags of
// fields (taggedRequestFields or taggedResponseFields) that v lacks reset.
func atVersion[M message](m M, v int16, fields []versionedField) M {
	out, copied := m, false
	edit := func() M {
		if !copied {
			out, copied = shallowCopy(m), true
			out.SetVersion(v)
		}
		return out
	}
	if m.GetVersion() != v {
		edit()
	}
	if f, ok := any(m).(*kmsg.FetchRequest); ok && fetchReplicaIDMisplaced(f, v) {
		moveFetchReplicaID(any(edit()).(*kmsg.FetchRequest), v)
	}
	key := m.Key()
	for i := range fields {
		if f := &fields[i]; f.key == key && v < f.since && f.set(out) {
			f.reset(edit())
		}
	}
	return out
}

// shallowCopy copies the struct m points to (every kmsg message is a pointer to a
// struct); slices and pointers inside are shared.
func shallowCopy[M message](m M) M {
	src := reflect.ValueOf(m).Elem()
	cp := reflect.New(src.Type())
	cp.Elem().Set(src)
	return cp.Interface().(M)
}

// appendSizePlaceholder reserves the 4-byte size prefix and returns its position.
func appendSizePlaceholder(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

func fillSize(dst []byte, at int) []byte {
	binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

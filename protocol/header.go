package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestHeader is a decoded request header (v1 or v2).
type RequestHeader struct {
	APIKey, APIVersion int16
	CorrelationID      int32
	ClientID           *string
}

var (
	// ErrUnsupportedAPI is wrapped when a request names an api kraftd does not serve.
	ErrUnsupportedAPI = errors.New("protocol: unsupported api")
	// ErrUnsupportedVersion is wrapped when a request's version is outside kraftd's range.
	ErrUnsupportedVersion = errors.New("protocol: unsupported api version")
	// ErrMalformedHeader is wrapped when a header is truncated or inconsistent.
	ErrMalformedHeader = errors.New("protocol: malformed header")
	// ErrRequestTooLarge is wrapped when a served request's body exceeds MaxRequestBodySize.
	ErrRequestTooLarge = errors.New("protocol: request too large")
)

// MaxRequestBodySize bounds the body of a request kraftd decodes. Every served request
// names one topic and partition and a few endpoints (a JVM Fetch is about 150 bytes), and
// the controller apis answered NOT_CONTROLLER are admin requests of a few items, but
// kmsg materialises each array element before reading it: an array count bounded only by
// the bytes present still costs up to ~32 bytes of memory per byte of input (Fetch
// topics). Refusing bodies above 1 MiB keeps a hostile request near 32 MiB instead of
// gigabytes under Kafka's 100 MB frame limit.
const MaxRequestBodySize = 1 << 20

// MaxRequestSize bounds a whole request frame kraftd reads: the largest body plus a header
// with the longest client id (int16 length) and room for header tags, which no served
// api defines. A server checks a frame's size prefix against it before reading any body
// byte, so a frame that could only be refused costs nothing to refuse.
const MaxRequestSize = MaxRequestBodySize + 10 + 32767 + 1024

// RawRequestHeader is a request header decoded without allocating: ClientID aliases the
// frame (nil means a null client id).
type RawRequestHeader struct {
	APIKey, APIVersion int16
	CorrelationID      int32
	ClientID           []byte
	// Flexible reports that the header was read as v2 (tag block present).
	Flexible bool
}

// Header converts the raw header into a RequestHeader, copying the client id.
func (h *RawRequestHeader) Header() RequestHeader {
	hdr := RequestHeader{APIKey: h.APIKey, APIVersion: h.APIVersion, CorrelationID: h.CorrelationID}
	if h.ClientID != nil {
		s := string(h.ClientID)
		hdr.ClientID = &s
	}
	return hdr
}

// ParseRequestHeader decodes the request header at the start of frame (the body of
// ReadFrame) and returns the body that follows it. It does not allocate.
//
// The header version follows the api version: v2 (with a tag block) when the api version
// is flexible per kmsg's schemas, v1 otherwise. For an api kmsg does not know the v1 part
// is decoded and the tag block question is left open: body is then whatever follows the
// client id (the caller only answers such requests by closing the connection).
func ParseRequestHeader(frame []byte) (RawRequestHeader, []byte, error) {
	var h RawRequestHeader
	if len(frame) < 10 {
		return h, nil, fmt.Errorf("%w: request header needs at least 10 bytes, have %d", ErrMalformedHeader, len(frame))
	}
	h.APIKey = int16(binary.BigEndian.Uint16(frame[0:]))
	h.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	n := int16(binary.BigEndian.Uint16(frame[8:]))
	rest := frame[10:]
	switch {
	case n == -1:
	case n < 0:
		return h, nil, fmt.Errorf("%w: client id length %d", ErrMalformedHeader, n)
	case int(n) > len(rest):
		return h, nil, fmt.Errorf("%w: client id length %d exceeds the %d remaining bytes", ErrMalformedHeader, n, len(rest))
	default:
		h.ClientID = rest[:n:n]
		rest = rest[n:]
	}
	if IsFlexible(h.APIKey, h.APIVersion) {
		h.Flexible = true
		var err error
		if rest, err = skipTags(rest); err != nil {
			return h, nil, fmt.Errorf("%w: request header tags: %v", ErrMalformedHeader, err)
		}
	}
	return h, rest, nil
}

// uvarint decodes an unsigned LEB128 value of at most 5 bytes (Kafka's uvarint is 32 bits).
func uvarint(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0, errors.New("uvarint overflows 32 bits")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1, nil
		}
	}
	if len(b) < 5 {
		return 0, 0, errors.New("truncated uvarint")
	}
	return 0, 0, errors.New("uvarint longer than 5 bytes")
}

// skipTags skips a tagged-field block (count, then tag, size, data per field).
func skipTags(b []byte) ([]byte, error) {
	count, n, err := uvarint(b)
	if err != nil {
		return nil, err
	}
	b = b[n:]
	for i := uint32(0); i < count; i++ {
		if _, n, err = uvarint(b); err != nil {
			return nil, fmt.Errorf("tag %d: %v", i, err)
		}
		b = b[n:]
		size, n, err := uvarint(b)
		if err != nil {
			return nil, fmt.Errorf("tag %d size: %v", i, err)
		}
		b = b[n:]
		if uint64(size) > uint64(len(b)) {
			return nil, fmt.Errorf("tag %d size %d exceeds the %d remaining bytes", i, size, len(b))
		}
		b = b[size:]
	}
	return b, nil
}

// ParseRequest parses a request frame (header v1/v2 by flexibility, then the kmsg body).
// For an api the table does not list or a version outside its range it returns the parsed
// header and an error wrapping ErrUnsupportedAPI / ErrUnsupportedVersion (so the caller can
// answer ApiVersions per Kafka's rule or close). Body decode errors are plain errors (a body
// above MaxRequestBodySize wraps ErrRequestTooLarge); the caller closes the connection.
//
// Byte fields of the returned request alias frame.
func (t *Table) ParseRequest(frame []byte) (RequestHeader, kmsg.Request, error) {
	raw, body, err := ParseRequestHeader(frame)
	if err != nil {
		return raw.Header(), nil, err
	}
	hdr := raw.Header()
	rng, ok := t.Versions(hdr.APIKey)
	if !ok {
		return hdr, nil, fmt.Errorf("%w: key %d (%s)", ErrUnsupportedAPI, hdr.APIKey, kmsg.NameForKey(hdr.APIKey))
	}
	if hdr.APIVersion < rng.Min || hdr.APIVersion > rng.Max {
		return hdr, nil, fmt.Errorf("%w: %s v%d (served: v%d-v%d)", ErrUnsupportedVersion,
			kmsg.NameForKey(hdr.APIKey), hdr.APIVersion, rng.Min, rng.Max)
	}
	if len(body) > MaxRequestBodySize {
		return hdr, nil, fmt.Errorf("%w: %s v%d body of %d bytes exceeds %d", ErrRequestTooLarge,
			kmsg.NameForKey(hdr.APIKey), hdr.APIVersion, len(body), MaxRequestBodySize)
	}
	req := kmsg.RequestForKey(hdr.APIKey)
	req.SetVersion(hdr.APIVersion)
	if err := req.ReadFrom(body); err != nil {
		return hdr, nil, fmt.Errorf("protocol: decode %s v%d request body: %w", kmsg.NameForKey(hdr.APIKey), hdr.APIVersion, err)
	}
	return hdr, req, nil
}

// AppendRequestHeader appends a request header (v2 when the version is flexible, else v1).
func AppendRequestHeader(dst []byte, key, version int16, corr int32, clientID *string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(key))
	dst = binary.BigEndian.AppendUint16(dst, uint16(version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if clientID == nil {
		dst = binary.BigEndian.AppendUint16(dst, 0xffff)
	} else {
		// The client id keeps its int16 length even in header v2; longer ids are cut at
		// the int16 limit rather than producing a corrupt frame.
		id := *clientID
		if len(id) > 32767 {
			id = id[:32767]
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(id)))
		dst = append(dst, id...)
	}
	if IsFlexible(key, version) {
		dst = append(dst, 0) // no tagged fields
	}
	return dst
}

// responseHeaderFlexible reports whether a response uses header v1 (tag block): flexible
// versions, except ApiVersions whose response header is always v0 (KIP-511).
func responseHeaderFlexible(key, version int16) bool {
	return key != int16(kmsg.ApiVersions) && IsFlexible(key, version)
}

// AppendResponseHeader appends a response header: v0 for ApiVersions and for non-flexible
// versions, v1 (empty tag block) otherwise.
func AppendResponseHeader(dst []byte, key, version int16, corr int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if responseHeaderFlexible(key, version) {
		dst = append(dst, 0)
	}
	return dst
}

// ResponseCorrelationID reads the correlation id of a response frame (body of ReadFrame).
func ResponseCorrelationID(frame []byte) (int32, error) {
	if len(frame) < 4 {
		return 0, fmt.Errorf("%w: response header needs 4 bytes, have %d", ErrMalformedHeader, len(frame))
	}
	return int32(binary.BigEndian.Uint32(frame)), nil
}

// ParseResponse decodes a response frame for a request of the given key and version.
//
// An ApiVersions response carrying UNSUPPORTED_VERSION is decoded in the v0 body layout
// (the server could not answer at the requested version) and returned with version 0, so
// the caller can retry with the server's advertised range. Byte fields (Fetch records,
// snapshot chunks) alias frame.
func ParseResponse(frame []byte, key, version int16) (kmsg.Response, error) {
	resp := kmsg.ResponseForKey(key)
	if resp == nil {
		return nil, fmt.Errorf("%w: key %d", ErrUnsupportedAPI, key)
	}
	if version < 0 || version > resp.MaxVersion() {
		return nil, fmt.Errorf("%w: %s v%d (kmsg knows up to v%d)", ErrUnsupportedVersion, kmsg.NameForKey(key), version, resp.MaxVersion())
	}
	if len(frame) < 4 {
		return nil, fmt.Errorf("%w: response header needs 4 bytes, have %d", ErrMalformedHeader, len(frame))
	}
	body := frame[4:]
	if responseHeaderFlexible(key, version) {
		var err error
		if body, err = skipTags(body); err != nil {
			return nil, fmt.Errorf("%w: response header tags: %v", ErrMalformedHeader, err)
		}
	}
	if key == int16(kmsg.ApiVersions) && version > 0 && len(body) >= 2 &&
		int16(binary.BigEndian.Uint16(body)) == kerr.UnsupportedVersion.Code {
		version = 0
	}
	resp.SetVersion(version)
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("protocol: decode %s v%d response body: %w", kmsg.NameForKey(key), version, err)
	}
	return resp, nil
}

package protocol

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzMaxFrame keeps fuzzed frame sizes small so that executions stay fast.
const fuzzMaxFrame = 1 << 16

// addRequestSeeds adds every captured request frame and a default request of every
// advertised api and version.
func addRequestSeeds(f *testing.F, prefixed bool) {
	id := "raft-client-1"
	add := func(frame []byte) {
		if !prefixed {
			frame = frame[4:]
		}
		f.Add(frame)
	}
	for _, g := range loadGoldenFrames(f) {
		if g.request {
			add(append([]byte{byte(len(g.frame) >> 24), byte(len(g.frame) >> 16), byte(len(g.frame) >> 8), byte(len(g.frame))}, g.frame...))
		}
	}
	for _, key := range append(testServed.Keys(), controllerKeys()...) {
		rng, _ := testApis.Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			add(AppendRequest(nil, int32(v), &id, req))
		}
	}
}

// FuzzReadFrame: framing plus header and body decoding of whatever a peer sends.
func FuzzReadFrame(f *testing.F) {
	addRequestSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		buf := make([]byte, 0, 64)
		for {
			frame, err := ReadFrame(r, fuzzMaxFrame, buf)
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) &&
					!errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrNegativeFrameSize) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(frame) > len(data) {
				t.Fatalf("frame of %d bytes from %d input bytes", len(frame), len(data))
			}
			raw, body, err := ParseRequestHeader(frame)
			if err == nil && len(body) > len(frame) {
				t.Fatalf("body longer than frame")
			}
			_ = raw
			_, _, _ = testApis.ParseRequest(frame)
			_, _ = ResponseCorrelationID(frame)
		}
	})
}

// FuzzParseRequest: every advertised api's body decoding. A request that decodes re-encodes
// to bytes that decode again and re-encode identically (a fixed point); exact round trips
// of canonical encodings are covered by the golden and table tests.
func FuzzParseRequest(f *testing.F) {
	addRequestSeeds(f, false)
	f.Fuzz(func(t *testing.T, frame []byte) {
		hdr, req, err := testApis.ParseRequest(frame)
		if err != nil {
			if req != nil {
				t.Fatalf("request returned with error %v", err)
			}
			return
		}
		if rng, ok := testApis.Versions(hdr.APIKey); !ok || hdr.APIVersion < rng.Min || hdr.APIVersion > rng.Max {
			t.Fatalf("unsupported %d v%d accepted", hdr.APIKey, hdr.APIVersion)
		}
		once := AppendRequest(nil, hdr.CorrelationID, hdr.ClientID, req)
		hdr2, req2, err := testApis.ParseRequest(once[4:])
		if err != nil {
			t.Fatalf("re-encoded %s v%d does not decode: %v", kmsg.NameForKey(hdr.APIKey), hdr.APIVersion, err)
		}
		if hdr2.APIKey != hdr.APIKey || hdr2.APIVersion != hdr.APIVersion || hdr2.CorrelationID != hdr.CorrelationID {
			t.Fatalf("header changed: %+v -> %+v", hdr, hdr2)
		}
		twice := AppendRequest(nil, hdr2.CorrelationID, hdr2.ClientID, req2)
		if !bytes.Equal(once, twice) {
			t.Fatalf("%s v%d: encoding is not a fixed point:\n%x\n%x", kmsg.NameForKey(hdr.APIKey), hdr.APIVersion, once, twice)
		}
	})
}

// FuzzDecodeBatch: record batch decoding (all codecs). A decoded batch re-encodes
// (uncompressed) to a batch that decodes to the same records; DecodeValues accepts and
// refuses exactly what DecodeBatch does and appends the same values.
func FuzzDecodeBatch(f *testing.F) {
	f.Add(unhex(f, goldenDataBatch))
	f.Add(unhex(f, goldenLeaderChangeBatch))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, rest, err := DecodeBatch(data)
		prefix := [][]byte{[]byte("kept")}
		h, values, vrest, verr := DecodeValues(data, prefix)
		if (err == nil) != (verr == nil) {
			t.Fatalf("DecodeBatch: %v, DecodeValues: %v", err, verr)
		}
		if err == nil {
			if len(values) != 1+len(b.Records) || string(values[0]) != "kept" || len(vrest) != len(rest) ||
				h.BaseOffset != b.BaseOffset || h.IsControl() != b.Control || h.LastOffset() != b.LastOffset() {
				t.Fatalf("DecodeValues: %d values, rest %d, header %+v; DecodeBatch: %d records, rest %d", len(values), len(vrest), h, len(b.Records), len(rest))
			}
			for i, r := range b.Records {
				if !sameBytes(values[1+i], r.Value) {
					t.Fatalf("value %d: %x, DecodeBatch %x", i, values[1+i], r.Value)
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrShortBatch) && !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("error outside ErrShortBatch/ErrCorruptBatch: %v", err)
			}
			return
		}
		if len(rest) > len(data)-BatchHeaderSize {
			t.Fatalf("rest %d of %d", len(rest), len(data))
		}
		enc := AppendBatch(nil, b)
		b2, rest2, err := DecodeBatch(enc)
		if err != nil || len(rest2) != 0 {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if b2.BaseOffset != b.BaseOffset || b2.PartitionLeaderEpoch != b.PartitionLeaderEpoch || b2.Control != b.Control ||
			b2.BaseTimestamp != b.BaseTimestamp || len(b2.Records) != len(b.Records) {
			t.Fatalf("batch changed: %+v -> %+v", b, b2)
		}
		for i := range b.Records {
			r, r2 := b.Records[i], b2.Records[i]
			if r2.OffsetDelta != int32(i) || r.TimestampDelta != r2.TimestampDelta || !sameBytes(r.Key, r2.Key) ||
				!sameBytes(r.Value, r2.Value) || len(r.Headers) != len(r2.Headers) {
				t.Fatalf("record %d changed: %+v -> %+v", i, r, r2)
			}
			for j := range r.Headers {
				if r.Headers[j].Key != r2.Headers[j].Key || !sameBytes(r.Headers[j].Value, r2.Headers[j].Value) {
					t.Fatalf("record %d header %d changed", i, j)
				}
			}
		}
		// Control records decode with the typed codecs without panicking.
		if b.Control {
			for _, r := range b.Records {
				typ, v, err := ReadControlRecord(r)
				if err != nil {
					continue
				}
				decodeControlValue(typ, v)
			}
		}
	})
}

// FuzzControlValue: the hand-written control value codecs. A value that decodes re-encodes
// to a value that decodes to the same encoding.
func FuzzControlValue(f *testing.F) {
	f.Add(int16(ControlSnapshotHeader), SnapshotHeaderRecord{LastContainedLogTimestamp: goldenTS}.AppendTo(nil))
	f.Add(int16(ControlSnapshotFooter), SnapshotFooterRecord{}.AppendTo(nil))
	f.Add(int16(ControlKRaftVersion), KRaftVersionRecord{KRaftVersion: 1}.AppendTo(nil))
	f.Add(int16(ControlKRaftVoters), VotersRecord{Voters: []VotersRecordVoter{{VoterID: 1,
		Endpoints: []VotersRecordEndpoint{{"CONTROLLER", "localhost", 9093}}, MaxSupportedVersion: 1}}}.AppendTo(nil))
	f.Add(int16(ControlLeaderChange), NewLeaderChange(1, []int32{1, 2, 3}, []int32{1}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, typ int16, value []byte) {
		enc, ok := decodeControlValue(typ, value)
		if !ok {
			return
		}
		enc2, ok := decodeControlValue(typ, enc)
		if !ok || !bytes.Equal(enc, enc2) {
			t.Fatalf("type %d: re-encoding not a fixed point: %x -> %x (%v)", typ, enc, enc2, ok)
		}
	})
}

// decodeControlValue decodes a control value with the codec for typ and re-encodes it.
func decodeControlValue(typ int16, v []byte) ([]byte, bool) {
	switch typ {
	case ControlLeaderChange:
		m, err := DecodeLeaderChange(v)
		if err != nil {
			return nil, false
		}
		return m.AppendTo(nil), true
	case ControlSnapshotHeader:
		var r SnapshotHeaderRecord
		if r.ReadFrom(v) != nil {
			return nil, false
		}
		return r.AppendTo(nil), true
	case ControlSnapshotFooter:
		var r SnapshotFooterRecord
		if r.ReadFrom(v) != nil {
			return nil, false
		}
		return r.AppendTo(nil), true
	case ControlKRaftVersion:
		var r KRaftVersionRecord
		if r.ReadFrom(v) != nil {
			return nil, false
		}
		return r.AppendTo(nil), true
	case ControlKRaftVoters:
		var r VotersRecord
		if r.ReadFrom(v) != nil {
			return nil, false
		}
		return r.AppendTo(nil), true
	}
	return nil, false
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// FuzzParseResponse: response decoding for every served api (what a peer answers). A
// response that decodes re-encodes to a fixed point.
func FuzzParseResponse(f *testing.F) {
	for _, g := range loadGoldenFrames(f) {
		if !g.request {
			f.Add(g.key, g.version, g.frame)
		}
	}
	for _, key := range testServed.Keys() {
		rng, _ := testServed.Versions(key)
		for v := rng.Min; v <= rng.Max; v++ {
			resp := kmsg.ResponseForKey(key)
			resp.SetVersion(v)
			f.Add(key, v, AppendResponse(nil, 1, resp)[4:])
		}
	}
	f.Fuzz(func(t *testing.T, key, version int16, frame []byte) {
		if _, ok := testServed.Versions(key); !ok {
			return
		}
		resp, err := ParseResponse(frame, key, version)
		if err != nil {
			return
		}
		once := AppendResponse(nil, 1, resp)
		back, err := ParseResponse(once[4:], key, resp.GetVersion())
		if err != nil {
			t.Fatalf("re-encoded %s v%d does not decode: %v", kmsg.NameForKey(key), resp.GetVersion(), err)
		}
		if twice := AppendResponse(nil, 1, back); !bytes.Equal(once, twice) {
			t.Fatalf("%s v%d: encoding is not a fixed point:\n%x\n%x", kmsg.NameForKey(key), version, once, twice)
		}
		if vectored := bytes.Join(AppendResponseVectored(nil, 1, back), nil); !bytes.Equal(vectored, once) {
			t.Fatalf("%s v%d: vectored encoding differs:\n%x\n%x", kmsg.NameForKey(key), version, vectored, once)
		}
	})
}

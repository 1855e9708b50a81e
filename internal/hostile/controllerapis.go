package hostile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// ControllerApisParams tune ControllerApis.
type ControllerApisParams struct {
	// Malformed is how many corrupted bodies (truncated, bytes flipped) each
	// api version gets besides its three well-formed hostile requests.
	Malformed int
	// MaxBody bounds the body of the wide request of each api version
	// (its top-level arrays filled up to it); 0 means 900 KiB, under
	// kraftd's 1 MiB body limit.
	MaxBody int
	Seed    uint64
}

// ControllerApisReport is what a target answered to ControllerApis.
type ControllerApisReport struct {
	Result
	Requests int // requests sent
	Answered int // answers that decoded as the api's response
	// Undecodable names the requests whose answer did not decode (or came
	// with another correlation id).
	Undecodable []string
	// Codes counts the error codes of the answers, per api: top level and
	// every item's.
	Codes map[string]map[int16]int
	// Silent names the well-formed requests the target neither answered
	// within the read timeout nor closed the connection of.
	Silent []string
}

// String is a one-line summary.
func (r ControllerApisReport) String() string {
	return fmt.Sprintf("%v; %d requests, %d answered, %d undecodable, %d unanswered", r.Result, r.Requests, r.Answered, len(r.Undecodable), len(r.Silent))
}

// notControllerApis are the apis of a controller listener that ControllerApis
// leaves out: raft's, and those the listener answers before any api.
var notControllerApis = map[int16]bool{
	int16(kmsg.Fetch): true, int16(kmsg.ApiVersions): true, int16(kmsg.Vote): true,
	int16(kmsg.BeginQuorumEpoch): true, int16(kmsg.EndQuorumEpoch): true, int16(kmsg.DescribeQuorum): true,
	int16(kmsg.FetchSnapshot): true, int16(kmsg.AddRaftVoter): true, int16(kmsg.RemoveRaftVoter): true,
	int16(kmsg.UpdateRaftVoter): true, int16(kmsg.SASLHandshake): true, int16(kmsg.SASLAuthenticate): true,
}

// ControllerApis sends every controller api the target lists in ApiVersions
// (the raft and SASL apis aside), at every version it lists, each request
// on its own connection: every field at its maximum (ids, epochs, counts,
// offsets MaxInt, strings long and non-ASCII, three items per array), every
// field at its minimum (negative, empty, null), the top-level arrays filled
// up to MaxBody, and Malformed corrupted bodies (the maximal request
// truncated or with bytes flipped). It reports what came back: answers
// that decode as the api's response and their error codes, answers that do
// not, connections the target closed, and requests left unanswered.
func ControllerApis(ctx context.Context, addr string, p ControllerApisParams) (ControllerApisReport, error) {
	if p.MaxBody == 0 {
		p.MaxBody = 900 << 10
	}
	rep := ControllerApisReport{Codes: map[string]map[int16]int{}}
	var t tally
	versions, err := targetVersions(ctx, addr, &t)
	if err != nil {
		return rep, err
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x6374726c61706973))
	corr := int32(0)
	for _, key := range sortedKeys(versions) {
		rangeOf := versions[key]
		for v := rangeOf.Min; v <= rangeOf.Max && ctx.Err() == nil; v++ {
			name := fmt.Sprintf("%s v%d", kmsg.NameForKey(key), v)
			for _, variant := range []struct {
				what string
				req  kmsg.Request
			}{
				{"maximal", fill(key, v, maxValues, 3)},
				{"minimal", fill(key, v, minValues, 0)},
				{"wide", wide(key, v, p.MaxBody)},
			} {
				corr++
				rep.Requests++
				sendRequest(ctx, addr, name+" "+variant.what, corr, variant.req, &t, &rep, true)
			}
			body := fill(key, v, maxValues, 3).AppendTo(nil)
			for range p.Malformed {
				bad := corrupt(body, rng)
				corr++
				rep.Requests++
				sendRaw(ctx, addr, name+" malformed", key, v, corr, bad, &t, &rep)
			}
		}
	}
	r, err := finish(&t, nil)
	rep.Result = r
	return rep, err
}

// targetVersions asks the target's ApiVersions for the controller apis.
func targetVersions(ctx context.Context, addr string, t *tally) (map[int16]protocol.VersionRange, error) {
	c, err := dial(ctx, addr, t)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 3, "kraftd-hostile", "1"
	resp, err := roundTrip(c, 0, req, t)
	if err != nil {
		return nil, fmt.Errorf("hostile: ApiVersions: %w", err)
	}
	out := map[int16]protocol.VersionRange{}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		if !notControllerApis[k.ApiKey] && kmsg.RequestForKey(k.ApiKey) != nil {
			out[k.ApiKey] = protocol.VersionRange{Min: k.MinVersion, Max: min(k.MaxVersion, kmsg.RequestForKey(k.ApiKey).MaxVersion())}
		}
	}
	return out, nil
}

func sortedKeys(m map[int16]protocol.VersionRange) []int16 {
	keys := make([]int16, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// readTimeout bounds the wait for one answer: a controller answers once
// its records commit, which a healthy quorum does in milliseconds.
const readTimeout = 5 * time.Second

// sendRequest sends req on a new connection and records the answer.
func sendRequest(ctx context.Context, addr, name string, corr int32, req kmsg.Request, t *tally, rep *ControllerApisReport, wellFormed bool) {
	sendFrame(ctx, addr, name, req.Key(), req.GetVersion(), corr, protocol.AppendRequest(nil, corr, &clientID, req), t, rep, wellFormed)
}

// sendRaw sends a frame of key and version with body.
func sendRaw(ctx context.Context, addr, name string, key, version int16, corr int32, body []byte, t *tally, rep *ControllerApisReport) {
	f := binary.BigEndian.AppendUint32(nil, 0)
	f = protocol.AppendRequestHeader(f, key, version, corr, &clientID)
	f = append(f, body...)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	sendFrame(ctx, addr, name, key, version, corr, f, t, rep, false)
}

func sendFrame(ctx context.Context, addr, name string, key, version int16, corr int32, f []byte, t *tally, rep *ControllerApisReport, wellFormed bool) {
	c, err := dial(ctx, addr, t)
	if err != nil {
		return
	}
	defer c.Close()
	t.frames.Add(1)
	if !write(ctx, c, f, t) {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(readTimeout))
	answer, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		var ne net.Error
		switch {
		case ctx.Err() != nil:
		case errors.As(err, &ne) && ne.Timeout():
			if wellFormed {
				rep.Silent = append(rep.Silent, name)
			}
		default:
			t.closed.Add(1)
		}
		return
	}
	if got, err := protocol.ResponseCorrelationID(answer); err != nil || got != corr {
		rep.Undecodable = append(rep.Undecodable, name+": correlation id")
		return
	}
	resp, err := protocol.ParseResponse(answer, key, version)
	if err != nil {
		rep.Undecodable = append(rep.Undecodable, name+": "+err.Error())
		return
	}
	rep.Answered++
	api := kmsg.NameForKey(key)
	if rep.Codes[api] == nil {
		rep.Codes[api] = map[int16]int{}
	}
	for _, code := range errorCodes(resp) {
		rep.Codes[api][code]++
	}
}

// errorCodes lists every ErrorCode field of resp, top level and in items.
func errorCodes(resp kmsg.Response) []int16 {
	var out []int16
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Struct {
				for i := 0; i < v.Len(); i++ {
					walk(v.Index(i))
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).Name == "ErrorCode" && v.Field(i).Kind() == reflect.Int16 {
					out = append(out, int16(v.Field(i).Int()))
					continue
				}
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(resp))
	return out
}

// CodeName is an error code's Kafka name.
func CodeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprint(code)
}

// Value extremes of fill.
type extreme int

const (
	maxValues extreme = iota
	minValues
)

// longString is a maximal string: long, mostly non-ASCII (UTF-16 lengths
// differ from UTF-8 ones), with characters no name allows.
var longString = strings.Repeat("é/☃ \x00", 60)

// fill returns key's request at version v with every field at the extreme;
// arrays get n items (top level and nested).
func fill(key, v int16, e extreme, n int) kmsg.Request {
	req := kmsg.RequestForKey(key)
	req.SetVersion(v)
	fillValue(reflect.ValueOf(req).Elem(), e, n, n)
	return req
}

// wide returns key's request at version v, maximal, with its top-level
// arrays holding as many items as fit in maxBody bytes.
func wide(key, v int16, maxBody int) kmsg.Request {
	size := func(n int) int {
		req := kmsg.RequestForKey(key)
		req.SetVersion(v)
		fillValue(reflect.ValueOf(req).Elem(), maxValues, n, 1)
		return len(req.AppendTo(nil))
	}
	one, two := size(1), size(2)
	n := 1
	if per := two - one; per > 0 {
		n = max(1, (maxBody-one)/per)
	}
	n = min(n, 200000)
	req := kmsg.RequestForKey(key)
	req.SetVersion(v)
	fillValue(reflect.ValueOf(req).Elem(), maxValues, n, 1)
	return req
}

// fillValue sets v to the extreme e; top is the item count of v's own
// arrays (top level), nested that of arrays below.
func fillValue(v reflect.Value, e extreme, top, nested int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(e == maxValues)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		if e == maxValues {
			v.SetInt(int64(uint64(1)<<(bits-1) - 1))
		} else {
			v.SetInt(-int64(uint64(1) << (bits - 1)))
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if e == maxValues {
			v.SetUint(math.MaxUint64 >> (64 - v.Type().Bits()))
		} else {
			v.SetUint(0)
		}
	case reflect.Float64:
		if e == maxValues {
			v.SetFloat(math.MaxFloat64)
		} else {
			v.SetFloat(math.Inf(-1))
		}
	case reflect.String:
		if e == maxValues {
			v.SetString(longString)
		} else {
			v.SetString("")
		}
	case reflect.Pointer:
		if e == minValues {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillValue(p.Elem(), e, nested, nested)
		v.Set(p)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillValue(v.Index(i), e, nested, nested)
		}
	case reflect.Slice:
		if e == minValues {
			v.SetZero()
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(longString))
			return
		}
		s := reflect.MakeSlice(v.Type(), top, top)
		for i := 0; i < top; i++ {
			fillValue(s.Index(i), e, nested, nested)
		}
		v.Set(s)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "Version" || f.Name == "UnknownTags" {
				continue
			}
			fillValue(v.Field(i), e, top, nested)
		}
	}
}

// corrupt returns body truncated at a random point, or with a few random
// bytes changed.
func corrupt(body []byte, rng *rand.Rand) []byte {
	if len(body) == 0 {
		return []byte{byte(rng.Uint32())}
	}
	if rng.IntN(2) == 0 {
		return append([]byte(nil), body[:rng.IntN(len(body))]...)
	}
	out := append([]byte(nil), body...)
	for range 1 + rng.IntN(4) {
		out[rng.IntN(len(out))] = byte(rng.Uint32())
	}
	return out
}

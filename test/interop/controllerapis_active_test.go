package interop

import (
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// activeCase is one request sent, at every version kraftd advertises for its api, to an
// active kraftd and to an active Kafka 4.4.0 controller.
type activeCase struct {
	name string
	key  kmsg.Key
	// build makes the request for a side (its cluster id) at version v; nil skips v.
	build func(v int16, clusterID string) kmsg.Request
	// refused: kraftd refuses the api by design (UNSUPPORTED_VERSION with its message in
	// every error field) where Kafka serves it; Kafka's answer is only logged.
	refused bool
}

// TestControllerApisActive sends UpdateFeatures, the ACL and delegation token apis, the
// apis kraftd refuses, UnregisterController, configs requests naming a resource twice and
// DescribeCluster,
// at every version, valid and invalid, to a single active kraftd controller and to a
// single active Kafka 4.4.0 controller, both node 1 of a static quorum formatted at the
// latest metadata.version: both answer with the same error codes in the same places and
// the same messages (the requests that change features change them alike on both
// sides), or both close the connection of a request Kafka fails to parse. The apis
// kraftd refuses get UNSUPPORTED_VERSION everywhere, never NOT_CONTROLLER.
func TestControllerApisActive(t *testing.T) {
	t.Parallel()
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1, Props: kafkatest.Props{config.ActiveControllerKey: "true"}})
	j := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1})
	for _, side := range []struct{ name, addr string }{{"kraftd", k.Addr}, {"kafka", j.Addr}} {
		if err := waitActiveRegistered(side.addr, 90*time.Second); err != nil {
			k.DumpLog(40)
			t.Fatalf("%s: %v", side.name, err)
		}
	}
	kc, jc := dialNode(t, k.Addr), dialNode(t, j.Addr)
	corr := int32(100)
	for _, c := range activeCases() {
		rng, ok := node.Apis().Versions(int16(c.key))
		if !ok {
			t.Fatalf("%s: kraftd does not list %s", c.name, c.key.Name())
		}
		for v := rng.Min; v <= rng.Max; v++ {
			kreq, jreq := c.build(v, k.ClusterID), c.build(v, j.ClusterID)
			if kreq == nil {
				continue
			}
			kreq.SetVersion(v)
			jreq.SetVersion(v)
			corr++
			name := fmt.Sprintf("%s, %s v%d", c.name, c.key.Name(), v)
			var jresp, kresp kmsg.Response
			jc, jresp = exchangeOrClosed(t, jc, j.Addr, corr, jreq)
			kc, kresp = exchangeOrClosed(t, kc, k.Addr, corr, kreq)
			switch {
			case jresp == nil || kresp == nil:
				t.Logf("%s: kafka %s; kraftd %s", name, answerLine(jresp), answerLine(kresp))
				if (jresp == nil) != (kresp == nil) {
					t.Errorf("%s: kafka %s, kraftd %s", name, answerLine(jresp), answerLine(kresp))
				}
			case c.refused:
				t.Logf("%s: kafka %s; kraftd refuses: %s", name, answerLine(jresp), answerLine(kresp))
				checkRefused(t, name, kresp)
			default:
				t.Logf("%s: %s", name, answerLine(kresp))
				if got, want := answerLine(kresp), answerLine(jresp); got != want {
					t.Errorf("%s:\nkafka:  %s\nkraftd: %s", name, want, got)
				}
			}
		}
	}
}

// waitActiveRegistered waits until the controller at addr answers DescribeCluster (controller
// endpoints) listing node 1: it is active, at a metadata.version, and registered itself.
func waitActiveRegistered(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType = 1, 2
		if resp, err := roundTrip(addr, req); err != nil {
			last = err.Error()
		} else if r := resp.(*kmsg.DescribeClusterResponse); r.ErrorCode != 0 || len(r.Brokers) == 0 {
			last = fmt.Sprintf("DescribeCluster: %s, %d controllers", errName(r.ErrorCode), len(r.Brokers))
		} else {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not registered as the active controller within %v: %s", timeout, last)
}

// roundTrip sends req on a connection of its own.
func roundTrip(addr string, req kmsg.Request) (kmsg.Response, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	client := "kraftd-interop"
	if _, err := c.Write(protocol.AppendRequest(nil, 1, &client, req)); err != nil {
		return nil, err
	}
	frame, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		return nil, err
	}
	return protocol.ParseResponse(frame, req.Key(), req.GetVersion())
}

// exchangeOrClosed is exchange, except that a connection the server closes instead of
// answering gives a nil response and a new connection.
func exchangeOrClosed(t *testing.T, c net.Conn, addr string, corr int32, req kmsg.Request) (net.Conn, kmsg.Response) {
	t.Helper()
	client := "kraftd-interop"
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(protocol.AppendRequest(nil, corr, &client, req)); err != nil {
		t.Fatalf("write %s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	frame, err := protocol.ReadFrame(c, protocol.DefaultMaxFrameSize, nil)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
		c.Close()
		return dialNode(t, addr), nil
	}
	if err != nil {
		t.Fatalf("read the answer to %s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	resp, err := protocol.ParseResponse(append([]byte(nil), frame...), req.Key(), req.GetVersion())
	if err != nil {
		t.Fatalf("decoding the answer to %s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return c, resp
}

func isReset(err error) bool { return err != nil && strings.Contains(err.Error(), "connection reset") }

// answerLine is a response's error codes with their paths and its messages; for the
// answers the comparison needs whole (a delegation token's principals and timestamps),
// every field.
func answerLine(resp kmsg.Response) string {
	if resp == nil {
		return "closed the connection"
	}
	line := errorCodes(resp) + " " + messages(resp)
	switch r := resp.(type) {
	case *kmsg.CreateDelegationTokenResponse:
		line += fmt.Sprintf(" owner %s:%s requester %s:%s times %d/%d/%d id %q hmac %x", r.PrincipalType, r.PrincipalName,
			r.TokenRequesterPrincipalType, r.TokenRequesterPrincipalName, r.IssueTimestamp, r.ExpiryTimestamp, r.MaxTimestamp, r.TokenID, r.HMAC)
	case *kmsg.RenewDelegationTokenResponse:
		line += fmt.Sprintf(" expiry %d", r.ExpiryTimestamp)
	case *kmsg.ExpireDelegationTokenResponse:
		line += fmt.Sprintf(" expiry %d", r.ExpiryTimestamp)
	case *kmsg.UpdateFeaturesResponse:
		for _, res := range r.Results {
			line += " result " + res.Feature
		}
	case *kmsg.EnvelopeResponse:
		line += fmt.Sprintf(" data %x", r.ResponseData)
	}
	return line
}

// checkRefused: every error field of kraftd's answer is UNSUPPORTED_VERSION with a
// message naming kraftd.
func checkRefused(t *testing.T, name string, resp kmsg.Response) {
	t.Helper()
	codes := 0
	errorFields(resp, func(path string, f reflect.Value) {
		switch {
		case f.Kind() == reflect.Int16:
			codes++
			if c := int16(f.Int()); c != kerr.UnsupportedVersion.Code {
				t.Errorf("%s: kraftd's %s is %s, want UNSUPPORTED_VERSION", name, path, errName(c))
			}
		case f.Kind() == reflect.Pointer && !f.IsNil():
			if m := f.Elem().String(); !strings.HasPrefix(m, "kraftd does not ") {
				t.Errorf("%s: kraftd's %s is %q", name, path, m)
			}
		}
	})
	if codes == 0 {
		t.Errorf("%s: kraftd answered without an error field: %+v", name, resp)
	}
}

// activeCases are the requests of TestControllerApisActive, in the order sent: the
// feature changes that succeed leave both sides alike.
func activeCases() []activeCase {
	var cs []activeCase
	cs = append(cs, updateFeaturesCases()...)
	cs = append(cs, aclCases()...)
	cs = append(cs, tokenCases()...)
	cs = append(cs, refusedCases()...)
	cs = append(cs, configCases()...)
	for _, typ := range []int8{2, 1, 7} {
		cs = append(cs, activeCase{name: fmt.Sprintf("endpoint type %d", typ), key: kmsg.DescribeCluster,
			build: func(int16, string) kmsg.Request {
				r := kmsg.NewPtrDescribeClusterRequest()
				r.EndpointType = typ
				return r
			}})
	}
	return cs
}

// upd is one feature update: its level and upgrade type (ignored at v0).
type upd struct {
	name  string
	level int16
	typ   int8
}

func updateFeaturesReq(validateOnly bool, allowDowngrade bool, us ...upd) func(int16, string) kmsg.Request {
	return func(v int16, _ string) kmsg.Request {
		if validateOnly && v == 0 {
			return nil
		}
		r := kmsg.NewPtrUpdateFeaturesRequest()
		r.ValidateOnly = validateOnly
		for _, u := range us {
			fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
			fu.Feature, fu.MaxVersionLevel, fu.UpgradeType, fu.AllowDowngrade = u.name, u.level, u.typ, allowDowngrade
			r.FeatureUpdates = append(r.FeatureUpdates, fu)
		}
		return r
	}
}

// at restricts a builder to one version.
func at(version int16, b func(int16, string) kmsg.Request) func(int16, string) kmsg.Request {
	return func(v int16, id string) kmsg.Request {
		if v != version {
			return nil
		}
		return b(v, id)
	}
}

func updateFeaturesCases() []activeCase {
	uf := func(name string, b func(int16, string) kmsg.Request) activeCase {
		return activeCase{name: name, key: kmsg.UpdateFeatures, build: b}
	}
	const safe, unsafe, upgrade = 2, 3, 1
	return []activeCase{
		uf("validate only", updateFeaturesReq(true, false, upd{"metadata.version", 33, upgrade}, upd{"group.version", 0, safe})),
		uf("metadata.version unchanged", updateFeaturesReq(false, false, upd{"metadata.version", 33, upgrade})),
		uf("metadata.version downgrade", updateFeaturesReq(false, false, upd{"metadata.version", 32, safe})),
		uf("metadata.version unsafe downgrade", updateFeaturesReq(false, false, upd{"metadata.version", 31, unsafe})),
		uf("metadata.version above the range", updateFeaturesReq(false, false, upd{"metadata.version", 34, upgrade})),
		uf("unknown feature", updateFeaturesReq(false, false, upd{"bogus.version", 1, upgrade})),
		uf("unknown feature at 0", updateFeaturesReq(false, false, upd{"bogus.version", 0, upgrade})),
		uf("negative level", updateFeaturesReq(false, false, upd{"group.version", -1, upgrade})),
		uf("upgrade type 0", updateFeaturesReq(false, false, upd{"group.version", 1, 0})),
		uf("upgrade type 4", updateFeaturesReq(false, false, upd{"group.version", 1, 4})),
		uf("upgrade with a downgrade type", updateFeaturesReq(false, false, upd{"group.version", 1, safe})),
		uf("two bad updates", updateFeaturesReq(false, false, upd{"metadata.version", 34, upgrade}, upd{"group.version", 9, upgrade})),
		uf("a feature twice", updateFeaturesReq(false, false, upd{"group.version", 9, upgrade}, upd{"group.version", 1, upgrade})),
		uf("empty", updateFeaturesReq(false, false)),
		// v0 reads no upgrade type (UPGRADE) and ignores AllowDowngrade.
		uf("v0 downgrade allowed", at(0, updateFeaturesReq(false, true, upd{"share.version", 1, upgrade}))),
		uf("share.version down", at(1, updateFeaturesReq(false, false, upd{"share.version", 1, safe}))),
		{name: "a broker supporting share.version 0-1", key: kmsg.BrokerRegistration, build: at(4, fakeBroker)},
		uf("share.version beyond a broker", at(2, updateFeaturesReq(false, false, upd{"share.version", 2, upgrade}))),
		uf("ELR off", at(1, updateFeaturesReq(false, false, upd{"eligible.leader.replicas.version", 0, safe}))),
		uf("ELR on", at(2, updateFeaturesReq(false, false, upd{"eligible.leader.replicas.version", 1, upgrade}))),
		uf("kraft.version downgrade", updateFeaturesReq(false, false, upd{"kraft.version", 0, safe})),
		uf("kraft.version 2", updateFeaturesReq(false, false, upd{"kraft.version", 2, upgrade})),
		uf("kraft.version upgrade", at(2, updateFeaturesReq(false, false, upd{"kraft.version", 1, upgrade}))),
		uf("kraft.version again", updateFeaturesReq(false, false, upd{"kraft.version", 1, upgrade})),
		uf("kraft.version back", updateFeaturesReq(false, false, upd{"kraft.version", 0, safe})),
	}
}

// fakeBroker registers broker 100 supporting every feature of Kafka 4.4 but
// share.version 0-1.
func fakeBroker(_ int16, clusterID string) kmsg.Request {
	r := kmsg.NewPtrBrokerRegistrationRequest()
	r.Version = 4
	r.BrokerID, r.ClusterID, r.IncarnationID = 100, clusterID, [16]byte{1, 0, 0, 100}
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "PLAINTEXT", "127.0.0.1", 9092
	r.Listeners = append(r.Listeners, l)
	for _, s := range features.Supported() {
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = s.Name, s.Min, s.Max
		if s.Name == "share.version" {
			f.MaxSupportedVersion = 1
		}
		r.Features = append(r.Features, f)
	}
	r.LogDirs = [][16]byte{{1, 0, 0, 100, 1}}
	return r
}

func aclCases() []activeCase {
	describe := func(resourceType kmsg.ACLResourceType) func(int16, string) kmsg.Request {
		return func(int16, string) kmsg.Request {
			r := kmsg.NewPtrDescribeACLsRequest()
			r.ResourceType, r.ResourcePatternType = resourceType, kmsg.ACLResourcePatternTypeAny
			r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			return r
		}
	}
	create := func(op kmsg.ACLOperation) func(int16, string) kmsg.Request {
		return func(int16, string) kmsg.Request {
			r := configOrAclRequest(int16(kmsg.CreateACLs)).(*kmsg.CreateACLsRequest)
			r.Creations[1].Operation = op
			return r
		}
	}
	deleteACLs := func(pattern kmsg.ACLResourcePatternType) func(int16, string) kmsg.Request {
		return func(int16, string) kmsg.Request {
			r := configOrAclRequest(int16(kmsg.DeleteACLs)).(*kmsg.DeleteACLsRequest)
			r.Filters[0].ResourcePatternType = pattern
			return r
		}
	}
	return []activeCase{
		{name: "any ACL", key: kmsg.DescribeACLs, build: describe(kmsg.ACLResourceTypeAny)},
		{name: "UNKNOWN resource type", key: kmsg.DescribeACLs, build: describe(0)},
		{name: "unassigned resource type", key: kmsg.DescribeACLs, build: describe(99)},
		{name: "two ACLs", key: kmsg.CreateACLs, build: create(kmsg.ACLOperationWrite)},
		{name: "UNKNOWN operation", key: kmsg.CreateACLs, build: create(0)},
		{name: "two filters", key: kmsg.DeleteACLs, build: deleteACLs(kmsg.ACLResourcePatternTypeLiteral)},
		{name: "UNKNOWN pattern type", key: kmsg.DeleteACLs, build: deleteACLs(0)},
	}
}

// tokenCases: on the PLAINTEXT listener, then forwarded in an Envelope by a broker for a
// client authenticated as User:alice (allowed; neither controller has a token secret).
func tokenCases() []activeCase {
	plain := func(key kmsg.Key) func(int16, string) kmsg.Request {
		return func(int16, string) kmsg.Request { return userRequest(int16(key)) }
	}
	owner := func(int16, string) kmsg.Request {
		r := userRequest(int16(kmsg.CreateDelegationToken)).(*kmsg.CreateDelegationTokenRequest)
		typ, name := "User", "bob"
		r.OwnerPrincipalType, r.OwnerPrincipalName = &typ, &name
		return r
	}
	forwarded := func(key kmsg.Key, inner func(int16, string) kmsg.Request) func(int16, string) kmsg.Request {
		return func(_ int16, id string) kmsg.Request {
			rng, _ := node.Apis().Versions(int16(key))
			req := inner(rng.Max, id)
			req.SetVersion(rng.Max)
			return envelopeOf(req, "alice", false)
		}
	}
	return []activeCase{
		{name: "PLAINTEXT", key: kmsg.CreateDelegationToken, build: plain(kmsg.CreateDelegationToken)},
		{name: "PLAINTEXT, for another owner", key: kmsg.CreateDelegationToken, build: owner},
		{name: "PLAINTEXT", key: kmsg.RenewDelegationToken, build: plain(kmsg.RenewDelegationToken)},
		{name: "PLAINTEXT", key: kmsg.ExpireDelegationToken, build: plain(kmsg.ExpireDelegationToken)},
		{name: "listed, handled by no controller", key: kmsg.DescribeDelegationToken, build: plain(kmsg.DescribeDelegationToken)},
		{name: "listed, handled by no controller", key: kmsg.DescribeUserSCRAMCredentials, build: plain(kmsg.DescribeUserSCRAMCredentials)},
		{name: "forwarded CreateDelegationToken", key: kmsg.Envelope, build: forwarded(kmsg.CreateDelegationToken, owner)},
		{name: "forwarded RenewDelegationToken", key: kmsg.Envelope, build: forwarded(kmsg.RenewDelegationToken, plain(kmsg.RenewDelegationToken))},
		{name: "forwarded ExpireDelegationToken", key: kmsg.Envelope, build: forwarded(kmsg.ExpireDelegationToken, plain(kmsg.ExpireDelegationToken))},
		{name: "forwarded, token-authenticated", key: kmsg.Envelope, build: func(int16, string) kmsg.Request {
			req := userRequest(int16(kmsg.RenewDelegationToken))
			req.SetVersion(2)
			return envelopeOf(req, "alice", true)
		}},
	}
}

// envelopeOf wraps inner as a broker forwards it for a client authenticated as
// User:user.
func envelopeOf(inner kmsg.Request, user string, tokenAuthenticated bool) *kmsg.EnvelopeRequest {
	client := "adminclient-1"
	r := kmsg.NewPtrEnvelopeRequest()
	r.RequestData = protocol.AppendRequest(nil, 99, &client, inner)[4:]
	p := kmsg.NewDefaultPrincipalData()
	p.Type, p.Name, p.TokenAuthenticated = "User", user, tokenAuthenticated
	r.RequestPrincipal = p.AppendTo(nil)
	r.ClientHostAddress = []byte{127, 0, 0, 1}
	return r
}

// refusedCases are the api kraftd refuses where Kafka serves it, then
// DescribeConfigs (two missing topics) and UnregisterController, which both
// serve.
func refusedCases() []activeCase {
	plain := func(key kmsg.Key) func(int16, string) kmsg.Request {
		return func(int16, string) kmsg.Request { return controllerApiRequest(int16(key), "") }
	}
	unregister := func(id int32) func(int16, string) kmsg.Request {
		return func(int16, string) kmsg.Request {
			r := kmsg.NewPtrUnregisterControllerRequest()
			r.ControllerID = id
			return r
		}
	}
	return []activeCase{
		{name: "two partitions", key: kmsg.AlterPartitionAssignments, build: plain(kmsg.AlterPartitionAssignments), refused: true},
		{name: "two topics", key: kmsg.DescribeConfigs, build: plain(kmsg.DescribeConfigs)},
		{name: "itself", key: kmsg.UnregisterController, build: unregister(1)},
		{name: "never registered", key: kmsg.UnregisterController, build: unregister(7)},
	}
}

// configCases name a topic twice, a second topic and a type Kafka does not know; no
// topic exists.
func configCases() []activeCase {
	type res struct {
		typ  kmsg.ConfigResourceType
		name string
	}
	resources := []res{{kmsg.ConfigResourceTypeTopic, "t1"}, {kmsg.ConfigResourceTypeTopic, "t2"}, {kmsg.ConfigResourceTypeTopic, "t1"},
		{99, "x"}, {kmsg.ConfigResourceTypeTopic, "t1"}}
	incremental := func(int16, string) kmsg.Request {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		for _, rs := range resources {
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = rs.typ, rs.name
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			v := "1000"
			c.Name, c.Op, c.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &v
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
		}
		return r
	}
	legacy := func(int16, string) kmsg.Request {
		r := kmsg.NewPtrAlterConfigsRequest()
		for _, rs := range resources {
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = rs.typ, rs.name
			r.Resources = append(r.Resources, rr)
		}
		return r
	}
	return []activeCase{
		{name: "a topic three times", key: kmsg.IncrementalAlterConfigs, build: incremental},
		{name: "a topic three times", key: kmsg.AlterConfigs, build: legacy},
	}
}

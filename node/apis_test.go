package node

import (
	"encoding/json"
	"net"
	"os"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// kafka440Controller is what a Kafka 4.4.0 controller lists in ApiVersions on its
// controller listener (asked of a live one; interop's TestControllerApisNotActive
// compares kraftd with a live one again).
var kafka440Controller = map[kmsg.Key]protocol.VersionRange{
	kmsg.Fetch: {Min: 4, Max: 18}, kmsg.SASLHandshake: {Min: 0, Max: 1}, kmsg.ApiVersions: {Min: 0, Max: 5},
	kmsg.CreateTopics: {Min: 2, Max: 7}, kmsg.DeleteTopics: {Min: 1, Max: 6}, kmsg.DescribeACLs: {Min: 1, Max: 3},
	kmsg.CreateACLs: {Min: 1, Max: 3}, kmsg.DeleteACLs: {Min: 1, Max: 3}, kmsg.DescribeConfigs: {Min: 1, Max: 4},
	kmsg.AlterConfigs: {Min: 0, Max: 2}, kmsg.SASLAuthenticate: {Min: 0, Max: 2}, kmsg.CreatePartitions: {Min: 0, Max: 3},
	kmsg.CreateDelegationToken: {Min: 1, Max: 3}, kmsg.RenewDelegationToken: {Min: 1, Max: 2},
	kmsg.ExpireDelegationToken: {Min: 1, Max: 2}, kmsg.DescribeDelegationToken: {Min: 1, Max: 3},
	kmsg.ElectLeaders: {Min: 0, Max: 2}, kmsg.IncrementalAlterConfigs: {Min: 0, Max: 1},
	kmsg.AlterPartitionAssignments: {Min: 0, Max: 1}, kmsg.ListPartitionReassignments: {Min: 0, Max: 0},
	kmsg.AlterClientQuotas: {Min: 0, Max: 1}, kmsg.DescribeUserSCRAMCredentials: {Min: 0, Max: 0},
	kmsg.AlterUserSCRAMCredentials: {Min: 0, Max: 0}, kmsg.Vote: {Min: 0, Max: 2}, kmsg.BeginQuorumEpoch: {Min: 0, Max: 1},
	kmsg.EndQuorumEpoch: {Min: 0, Max: 1}, kmsg.DescribeQuorum: {Min: 0, Max: 2}, kmsg.AlterPartition: {Min: 2, Max: 3},
	kmsg.UpdateFeatures: {Min: 0, Max: 2}, kmsg.Envelope: {Min: 0, Max: 0}, kmsg.FetchSnapshot: {Min: 0, Max: 1},
	kmsg.DescribeCluster: {Min: 0, Max: 2}, kmsg.BrokerRegistration: {Min: 0, Max: 4}, kmsg.BrokerHeartbeat: {Min: 0, Max: 2},
	kmsg.UnregisterBroker: {Min: 0, Max: 0}, kmsg.AllocateProducerIDs: {Min: 0, Max: 0},
	kmsg.ControllerRegistration: {Min: 0, Max: 0}, kmsg.AssignReplicasToDirs: {Min: 0, Max: 0},
	kmsg.AddRaftVoter: {Min: 0, Max: 1}, kmsg.RemoveRaftVoter: {Min: 0, Max: 0}, kmsg.UpdateRaftVoter: {Min: 0, Max: 0},
	kmsg.UnregisterController: {Min: 0, Max: 0},
}

// A node advertises exactly a Kafka 4.4.0 controller's apis and ranges (all within
// kmsg's versions: the table refuses others), ascending.
func TestAdvertisementIsKafka440Controller(t *testing.T) {
	got := Apis().ApiVersionsResponse(protocol.ClientApiVersionsVersion).ApiKeys
	if len(got) != len(kafka440Controller) {
		t.Errorf("kraftd lists %d apis, Kafka 4.4.0's controller %d", len(got), len(kafka440Controller))
	}
	for i, k := range got {
		want, ok := kafka440Controller[kmsg.Key(k.ApiKey)]
		if !ok || want != (protocol.VersionRange{Min: k.MinVersion, Max: k.MaxVersion}) {
			t.Errorf("%s: kraftd lists %d-%d, Kafka 4.4.0 %v (listed %v)", kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion, want, ok)
		}
		if i > 0 && got[i-1].ApiKey >= k.ApiKey {
			t.Errorf("%s listed after %s", kmsg.NameForKey(k.ApiKey), kmsg.NameForKey(got[i-1].ApiKey))
		}
	}
}

// servedKeys are the keys of the apis a node serves itself (not answered
// NOT_CONTROLLER).
// servedKeys are the keys the layers serve but for the controller apis the
// active controller serves, whose registrations are protocol.ControllerApis'
// own (checked against Kafka 4.4.0 there).
func servedKeys() []int16 {
	var keys []int16
	for _, l := range servedApis() {
		for _, a := range l {
			if !slices.ContainsFunc(protocol.ControllerApis(), func(c protocol.Api) bool { return c.Key == a.Key }) {
				keys = append(keys, int16(a.Key))
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// TestServedRangesMatchKafka440Schemas checks the served apis and the flexible-version
// rule of each against Kafka 4.4.0's message schemas (validVersions, flexibleVersions).
func TestServedRangesMatchKafka440Schemas(t *testing.T) {
	raw, err := os.ReadFile("../testdata/kafka-jvm-raft/json/kafka-4.4.0-raft-api-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	var schemas struct {
		Apis []struct {
			Name                                                 string
			ApiKey, MinVersion, MaxVersion, FirstFlexibleVersion int16
		}
	}
	if err := json.Unmarshal(raw, &schemas); err != nil {
		t.Fatal(err)
	}
	var schemaKeys []int16
	apis := Apis()
	for _, s := range schemas.Apis {
		schemaKeys = append(schemaKeys, s.ApiKey)
		got, ok := apis.Versions(s.ApiKey)
		if !ok || got != (protocol.VersionRange{Min: s.MinVersion, Max: s.MaxVersion}) {
			t.Errorf("%s: kraftd serves %v (%v), Kafka 4.4.0 defines %d-%d", s.Name, got, ok, s.MinVersion, s.MaxVersion)
		}
		for v := s.MinVersion; v <= s.MaxVersion; v++ {
			if protocol.IsFlexible(s.ApiKey, v) != (v >= s.FirstFlexibleVersion) {
				t.Errorf("%s v%d: IsFlexible %v, Kafka's flexibleVersions %d+", s.Name, v, protocol.IsFlexible(s.ApiKey, v), s.FirstFlexibleVersion)
			}
		}
	}
	slices.Sort(schemaKeys)
	if served := servedKeys(); !slices.Equal(served, schemaKeys) {
		t.Errorf("kraftd serves %v, the schemas are of %v", served, schemaKeys)
	}
}

// kafkaDeviations lists where kraftd's advertisement (Kafka 4.4.0's) differs from the
// captured answer of a Kafka 4.0-SNAPSHOT controller (trunk 1eb7644): the api versions Kafka
// added or dropped since. The interop test against a live 4.4.0 controller is the final judge.
var kafkaDeviations = map[kmsg.Key]protocol.VersionRange{
	kmsg.Fetch:           {Min: 4, Max: 18}, // v0-3 removed in 4.0 (KIP-896), v18 added (KIP-1166)
	kmsg.ApiVersions:     {Min: 0, Max: 5},  // KIP-1242
	kmsg.Vote:            {Min: 0, Max: 2},  // KIP-996 pre-vote (Kafka 4.0)
	kmsg.DescribeCluster: {Min: 0, Max: 2},  // IncludeFencedBrokers (Kafka 4.0)
	kmsg.AddRaftVoter:    {Min: 0, Max: 1},  // AckWhenCommitted (KIP-1186)
}

func TestServedRangesMatchKafkaController(t *testing.T) {
	raw, err := os.ReadFile("../testdata/kafka-jvm-raft/json/apiversions-node1.json")
	if err != nil {
		t.Fatal(err)
	}
	var kafka struct {
		ApiKeys []struct {
			ApiKey, MinVersion, MaxVersion int16
		}
	}
	if err := json.Unmarshal(raw, &kafka); err != nil {
		t.Fatal(err)
	}
	kafkaRange := map[int16]protocol.VersionRange{}
	for _, k := range kafka.ApiKeys {
		kafkaRange[k.ApiKey] = protocol.VersionRange{Min: k.MinVersion, Max: k.MaxVersion}
	}
	apis := Apis()
	for _, key := range servedKeys() {
		got, _ := apis.Versions(key)
		want, inKafka := kafkaRange[key]
		if d, ok := kafkaDeviations[kmsg.Key(key)]; ok {
			want, inKafka = d, true
		}
		if !inKafka {
			t.Errorf("%s (%d): served by kraftd, not advertised by the Kafka controller", kmsg.NameForKey(key), key)
			continue
		}
		if got != want {
			t.Errorf("%s (%d): kraftd serves %v, Kafka controller advertises %v", kmsg.NameForKey(key), key, got, want)
		}
	}
	// Every raft api of the controller is served, and no other api.
	for _, key := range []kmsg.Key{kmsg.Fetch, kmsg.ApiVersions, kmsg.Vote, kmsg.BeginQuorumEpoch, kmsg.EndQuorumEpoch,
		kmsg.DescribeQuorum, kmsg.FetchSnapshot, kmsg.DescribeCluster, kmsg.AddRaftVoter, kmsg.RemoveRaftVoter, kmsg.UpdateRaftVoter} {
		if !slices.Contains(servedKeys(), int16(key)) {
			t.Errorf("raft api %s not served", key.Name())
		}
	}
	for _, key := range []int16{0, 3, 7, 16, 19, -1, 1000} {
		if slices.Contains(servedKeys(), key) {
			t.Errorf("key %d unexpectedly served", key)
		}
	}
}

// Every api of the table has exactly one registration and is served: by the network
// server, or by its route, which answers a request of it (or hands a raft request to the
// run loop); the node routes no api outside the table.
func TestEveryApiServed(t *testing.T) {
	n := testNode(t)
	ci := &network.ConnInfo{Listener: "CONTROLLER", Remote: &net.TCPAddr{}}
	if _, err := protocol.NewTable(append(servedApis(), notControllerApis(servedApis()))...); err != nil {
		t.Fatal(err)
	}
	own := protocol.MustTable(network.Apis())
	raftApis := protocol.MustTable(raft.Apis())
	for _, a := range n.apis.Apis() {
		key := int16(a.Key)
		r := n.routes.of(key)
		if own.Lookup(key) != nil {
			if r != nil {
				t.Errorf("%s: answered by the server and routed", a.Name())
			}
			continue
		}
		if r == nil {
			t.Errorf("%s: listed, not routed", a.Name())
			continue
		}
		req := validRequest(key)
		req.SetVersion(a.Versions.Max)
		var got kmsg.Response
		n.Handle(ci, protocolHeader(key), req, func(r kmsg.Response) { got = r })
		if raftApis.Lookup(key) != nil {
			select {
			case m := <-n.inbox:
				if m.Request != req {
					t.Errorf("%s: the loop got %+v", a.Name(), m)
				}
			default:
				t.Errorf("%s: not handed to the loop (answered %v)", a.Name(), got)
			}
			continue
		}
		if got == nil || got.Key() != key {
			t.Errorf("%s: answered %v", a.Name(), got)
		}
	}
	for k := range int16(protocol.MaxKey) {
		if n.routes.of(k) != nil && n.apis.Lookup(k) == nil {
			t.Errorf("%s routed but not listed", kmsg.NameForKey(k))
		}
	}
}

// Every controller api is registered by a layer (served, or refused as a
// Kafka controller refuses it): the NOT_CONTROLLER table is empty, and it
// would hold exactly the controller apis no layer registered.
func TestNotControllerOnlyUnserved(t *testing.T) {
	if got := notControllerApis(servedApis()); len(got) != 0 {
		t.Errorf("%d controller apis answered NOT_CONTROLLER by no layer's registration: %v", len(got), got)
	}
	partial := [][]protocol.Api{network.Apis(), raft.Apis()}
	if got, want := len(notControllerApis(partial)), len(protocol.ControllerApis()); got != want {
		t.Errorf("%d apis answered NOT_CONTROLLER without the node's own, want %d", got, want)
	}
}

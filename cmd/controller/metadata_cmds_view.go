package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/uuid"
)

// The JSON forms of the views. Field names are stable: scripts and tests
// read them.

type jsonEndpoint struct {
	Name             string `json:"name"`
	Host             string `json:"host"`
	Port             uint16 `json:"port"`
	SecurityProtocol string `json:"securityProtocol"`
}

type jsonFeatureRange struct {
	Name string `json:"name"`
	Min  int16  `json:"minSupportedVersion"`
	Max  int16  `json:"maxSupportedVersion"`
}

type jsonBroker struct {
	ID                   int32              `json:"id"`
	Epoch                int64              `json:"epoch"`
	IncarnationID        string             `json:"incarnationId"`
	Fenced               bool               `json:"fenced"`
	InControlledShutdown bool               `json:"inControlledShutdown"`
	Endpoints            []jsonEndpoint     `json:"endpoints"`
	Rack                 *string            `json:"rack"`
	Features             []jsonFeatureRange `json:"features"`
	LogDirs              []string           `json:"logDirs"`
	CordonedLogDirs      []string           `json:"cordonedLogDirs"`
	MigratingZkBroker    bool               `json:"migratingZkBroker"`
}

type jsonController struct {
	ID            int32              `json:"id"`
	IncarnationID string             `json:"incarnationId"`
	Endpoints     []jsonEndpoint     `json:"endpoints"`
	Features      []jsonFeatureRange `json:"features"`
}

type jsonTopic struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Partitions int    `json:"partitions"`
}

type jsonPartition struct {
	Topic               string   `json:"topic"`
	TopicID             string   `json:"topicId"`
	Partition           int32    `json:"partition"`
	Leader              int32    `json:"leader"`
	LeaderEpoch         int32    `json:"leaderEpoch"`
	PartitionEpoch      int32    `json:"partitionEpoch"`
	Replicas            []int32  `json:"replicas"`
	ISR                 []int32  `json:"isr"`
	ELR                 []int32  `json:"elr"`
	LastKnownELR        []int32  `json:"lastKnownElr"`
	AddingReplicas      []int32  `json:"addingReplicas"`
	RemovingReplicas    []int32  `json:"removingReplicas"`
	LeaderRecoveryState int8     `json:"leaderRecoveryState"`
	Directories         []string `json:"directories"`
}

type jsonConfig struct {
	ResourceType string `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	Name         string `json:"name"`
	Value        string `json:"value"`
}

type jsonFeature struct {
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

type jsonFeatures struct {
	MetadataVersion      string        `json:"metadataVersion"`
	MetadataVersionLevel int16         `json:"metadataVersionLevel"`
	Finalized            []jsonFeature `json:"finalized"`
}

type jsonEntityPart struct {
	Type string  `json:"type"`
	Name *string `json:"name"` // null: the type's default entity
}

type jsonQuota struct {
	Entity []jsonEntityPart `json:"entity"`
	Key    string           `json:"key"`
	Value  float64          `json:"value"`
}

type jsonScram struct {
	User      string `json:"user"`
	Mechanism string `json:"mechanism"`
}

type jsonACL struct {
	ID             string `json:"id"`
	ResourceType   string `json:"resourceType"`
	ResourceName   string `json:"resourceName"`
	PatternType    string `json:"patternType"`
	Principal      string `json:"principal"`
	Host           string `json:"host"`
	Operation      string `json:"operation"`
	PermissionType string `json:"permissionType"`
}

type jsonSummary struct {
	MetadataVersion           string `json:"metadataVersion"`
	Topics                    int    `json:"topics"`
	Partitions                int    `json:"partitions"`
	OfflinePartitions         int    `json:"offlinePartitions"`
	ImbalancedPartitions      int    `json:"imbalancedPartitions"`
	Brokers                   int    `json:"brokers"`
	FencedBrokers             int    `json:"fencedBrokers"`
	ActiveBrokers             int    `json:"activeBrokers"`
	ControlledShutdownBrokers int    `json:"controlledShutdownBrokers"`
	Controllers               int    `json:"controllers"`
	Configs                   int    `json:"configs"`
	ClientQuotas              int    `json:"clientQuotas"`
	ACLs                      int    `json:"acls"`
	ScramCredentials          int    `json:"scramCredentials"`
	DelegationTokens          int    `json:"delegationTokens"`
	NextProducerID            int64  `json:"nextProducerId"`
}

// Kafka's names for the codes the views print.
var (
	securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}
	resourceTypes     = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternTypes      = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	aclOperations     = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}
	permissionTypes = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
	scramMechanisms = []string{"UNKNOWN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
)

func codeName[T ~int8 | ~int16](names []string, c T) string {
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return strconv.Itoa(int(c))
}

// configResourceType names Kafka's ConfigResource.Type ids.
func configResourceType(t int8) string {
	switch t {
	case 2:
		return "TOPIC"
	case 4:
		return "BROKER"
	case 8:
		return "BROKER_LOGGER"
	case 16:
		return "CLIENT_METRICS"
	case 32:
		return "GROUP"
	}
	return strconv.Itoa(int(t))
}

func imageEndpoints(eps []image.Endpoint) []jsonEndpoint {
	out := make([]jsonEndpoint, len(eps))
	for i, e := range eps {
		out[i] = jsonEndpoint{e.Name, e.Host, e.Port, codeName(securityProtocols, e.SecurityProtocol)}
	}
	return out
}

func featureRanges(fs []image.FeatureRange) []jsonFeatureRange {
	out := make([]jsonFeatureRange, len(fs))
	for i, f := range fs {
		out[i] = jsonFeatureRange{f.Name, f.Min, f.Max}
	}
	return out
}

func uuids(us []uuid.UUID) []string {
	if us == nil {
		return nil
	}
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}

func ints(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func metadataVersionName(im *image.Image) (string, int16) {
	lvl, ok := im.MetadataVersion()
	if !ok {
		return "", 0
	}
	if mv, err := features.MetadataVersionByLevel(int16(lvl)); err == nil {
		return mv.Name, int16(lvl)
	}
	return strconv.Itoa(int(lvl)), int16(lvl)
}

// viewData builds a view's content: a slice (or struct) for JSON, and text
// rows (a header, then one row a line; cells tab-separated) for text.
func viewData(im *image.Image, view, topic string) (any, [][]string, error) {
	var rows [][]string
	row := func(cells ...any) {
		r := make([]string, len(cells))
		for i, c := range cells {
			r[i] = fmt.Sprint(c)
		}
		rows = append(rows, r)
	}
	switch view {
	case "summary":
		c := im.Counts()
		mv, _ := metadataVersionName(im)
		s := jsonSummary{
			MetadataVersion: mv, Topics: c.Topics, Partitions: c.Partitions,
			OfflinePartitions: c.OfflinePartitions, ImbalancedPartitions: c.ImbalancedPartitions,
			Brokers: c.FencedBrokers + c.ActiveBrokers, FencedBrokers: c.FencedBrokers, ActiveBrokers: c.ActiveBrokers,
			ControlledShutdownBrokers: c.ControlledShutdownBrokers, Controllers: c.Controllers,
			NextProducerID: im.NextProducerID(),
		}
		s.Configs = count(im.AllConfigs())
		s.ClientQuotas = count(im.ClientQuotas())
		s.ACLs = count(im.ACLs())
		s.ScramCredentials = count(im.ScramCredentials())
		s.DelegationTokens = count(im.DelegationTokens())
		row("KEY", "VALUE")
		for _, kv := range []struct {
			k string
			v any
		}{
			{"metadataVersion", s.MetadataVersion}, {"topics", s.Topics}, {"partitions", s.Partitions},
			{"offlinePartitions", s.OfflinePartitions}, {"imbalancedPartitions", s.ImbalancedPartitions},
			{"brokers", s.Brokers}, {"fencedBrokers", s.FencedBrokers}, {"activeBrokers", s.ActiveBrokers},
			{"controlledShutdownBrokers", s.ControlledShutdownBrokers}, {"controllers", s.Controllers},
			{"configs", s.Configs}, {"clientQuotas", s.ClientQuotas}, {"acls", s.ACLs},
			{"scramCredentials", s.ScramCredentials}, {"delegationTokens", s.DelegationTokens},
			{"nextProducerId", s.NextProducerID},
		} {
			row(kv.k, kv.v)
		}
		return s, rows, nil
	case "brokers":
		out := []jsonBroker{}
		row("ID", "EPOCH", "INCARNATION", "FENCED", "CONTROLLED_SHUTDOWN", "RACK", "ENDPOINTS", "LOG_DIRS")
		for b := range im.Brokers() {
			j := jsonBroker{
				ID: b.ID, Epoch: b.Epoch, IncarnationID: b.IncarnationID.String(), Fenced: b.Fenced,
				InControlledShutdown: b.InControlledShutdown, Endpoints: imageEndpoints(b.Endpoints), Rack: b.Rack,
				Features: featureRanges(b.Features), LogDirs: uuids(b.LogDirs), CordonedLogDirs: uuids(b.CordonedLogDirs),
				MigratingZkBroker: b.MigratingZkBroker,
			}
			if j.LogDirs == nil {
				j.LogDirs = []string{}
			}
			out = append(out, j)
			rack := "-" // none
			if b.Rack != nil {
				rack = strconv.Quote(*b.Rack)
			}
			row(b.ID, b.Epoch, j.IncarnationID, b.Fenced, b.InControlledShutdown, rack, endpointText(j.Endpoints), list(j.LogDirs))
		}
		return out, rows, nil
	case "controllers":
		out := []jsonController{}
		row("ID", "INCARNATION", "ENDPOINTS")
		for c := range im.Controllers() {
			j := jsonController{c.ID, c.IncarnationID.String(), imageEndpoints(c.Endpoints), featureRanges(c.Features)}
			out = append(out, j)
			row(c.ID, j.IncarnationID, endpointText(j.Endpoints))
		}
		return out, rows, nil
	case "topics":
		out := []jsonTopic{}
		row("NAME", "ID", "PARTITIONS")
		for _, t := range topicsByName(im) {
			out = append(out, jsonTopic{t.Name(), t.ID().String(), t.PartitionCount()})
			row(t.Name(), t.ID(), t.PartitionCount())
		}
		return out, rows, nil
	case "partitions":
		out := []jsonPartition{}
		row("TOPIC", "PARTITION", "LEADER", "LEADER_EPOCH", "PARTITION_EPOCH", "REPLICAS", "ISR", "ELR", "LAST_KNOWN_ELR", "ADDING", "REMOVING", "DIRECTORIES")
		ts := topicsByName(im)
		if topic != "" {
			t, ok := im.TopicByName(topic)
			if !ok {
				return nil, nil, fmt.Errorf("no topic %q at offset %d", topic, im.Provenance().Offset)
			}
			ts = []*image.Topic{t}
		}
		for _, t := range ts {
			for pid, p := range t.Partitions() {
				j := jsonPartition{
					Topic: t.Name(), TopicID: t.ID().String(), Partition: pid, Leader: p.Leader(),
					LeaderEpoch: p.LeaderEpoch(), PartitionEpoch: p.PartitionEpoch(), Replicas: ints(p.Replicas()),
					ISR: ints(p.ISR()), ELR: ints(p.ELR()), LastKnownELR: ints(p.LastKnownELR()),
					AddingReplicas: ints(p.AddingReplicas()), RemovingReplicas: ints(p.RemovingReplicas()),
					LeaderRecoveryState: p.LeaderRecoveryState(), Directories: uuids(p.Directories()),
				}
				if j.Directories == nil {
					j.Directories = []string{}
				}
				out = append(out, j)
				row(t.Name(), pid, p.Leader(), p.LeaderEpoch(), p.PartitionEpoch(), list(j.Replicas), list(j.ISR),
					list(j.ELR), list(j.LastKnownELR), list(j.AddingReplicas), list(j.RemovingReplicas), list(j.Directories))
			}
		}
		return out, rows, nil
	case "configs":
		out := []jsonConfig{}
		row("RESOURCE_TYPE", "RESOURCE", "NAME", "VALUE")
		for c := range im.AllConfigs() {
			j := jsonConfig{configResourceType(c.ResourceType), c.ResourceName, c.Name, c.Value}
			out = append(out, j)
			res := j.ResourceName
			if res == "" {
				res = "<default>"
			}
			row(j.ResourceType, res, j.Name, j.Value)
		}
		return out, rows, nil
	case "features":
		name, lvl := metadataVersionName(im)
		out := jsonFeatures{MetadataVersion: name, MetadataVersionLevel: lvl, Finalized: []jsonFeature{}}
		row("FEATURE", "LEVEL")
		if name != "" {
			row(features.MetadataVersionName, fmt.Sprintf("%d (%s)", lvl, name))
		}
		for f, l := range im.Features() {
			if f == features.MetadataVersionName {
				continue
			}
			out.Finalized = append(out.Finalized, jsonFeature{f, l})
			row(f, l)
		}
		return out, rows, nil
	case "producer-ids":
		out := struct {
			NextProducerID int64 `json:"nextProducerId"`
		}{im.NextProducerID()}
		row("NEXT_PRODUCER_ID")
		row(out.NextProducerID)
		return out, rows, nil
	case "quotas":
		out := []jsonQuota{}
		row("ENTITY", "KEY", "VALUE")
		for q := range im.ClientQuotas() {
			j := jsonQuota{Entity: []jsonEntityPart{}, Key: q.Key, Value: q.Value}
			var ent []string
			for _, p := range q.Entity {
				j.Entity = append(j.Entity, jsonEntityPart{p.Type, p.Name})
				n := "<default>"
				if p.Name != nil {
					n = *p.Name
				}
				ent = append(ent, p.Type+"="+n)
			}
			out = append(out, j)
			row(strings.Join(ent, ","), q.Key, strconv.FormatFloat(q.Value, 'g', -1, 64))
		}
		return out, rows, nil
	case "scram":
		out := []jsonScram{}
		row("USER", "MECHANISM")
		for c := range im.ScramCredentials() {
			j := jsonScram{c.Name, codeName(scramMechanisms, c.Mechanism)}
			out = append(out, j)
			row(j.User, j.Mechanism)
		}
		return out, rows, nil
	case "acls":
		out := []jsonACL{}
		row("ID", "RESOURCE_TYPE", "RESOURCE", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION")
		for a := range im.ACLs() {
			j := jsonACL{a.ID.String(), codeName(resourceTypes, a.ResourceType), a.ResourceName, codeName(patternTypes, a.PatternType),
				a.Principal, a.Host, codeName(aclOperations, a.Operation), codeName(permissionTypes, a.PermissionType)}
			out = append(out, j)
			row(j.ID, j.ResourceType, j.ResourceName, j.PatternType, j.Principal, j.Host, j.Operation, j.PermissionType)
		}
		return out, rows, nil
	}
	return nil, nil, fmt.Errorf("unknown view %q", view)
}

// printView prints a view: text, a line naming the image's offset and then
// aligned columns; or JSON, {"offset":N,"epoch":E,"<view>":...}.
func printView(w io.Writer, im *image.Image, view string, asJSON bool, topic string) error {
	data, rows, err := viewData(im, view, topic)
	if err != nil {
		return err
	}
	prov := im.Provenance()
	bw := bufio.NewWriter(w)
	if asJSON {
		key := strings.ReplaceAll(view, "-", "")
		if view == "producer-ids" {
			key = "producerIds"
		}
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "{\"offset\":%d,\"epoch\":%d,%q:%s}\n", prov.Offset, prov.Epoch, key, b)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "# image at offset %d, epoch %d\n", prov.Offset, prov.Epoch)
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

func count[T any](s func(yield func(T) bool)) int {
	n := 0
	for range s {
		n++
	}
	return n
}

func topicsByName(im *image.Image) []*image.Topic {
	var ts []*image.Topic
	for t := range im.Topics() {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *image.Topic) int { return strings.Compare(a.Name(), b.Name()) })
	return ts
}

func endpointText(eps []jsonEndpoint) string {
	if len(eps) == 0 {
		return "-"
	}
	s := make([]string, len(eps))
	for i, e := range eps {
		s[i] = fmt.Sprintf("%s://%s:%d(%s)", e.Name, e.Host, e.Port, e.SecurityProtocol)
	}
	return strings.Join(s, ",")
}

func list[T any](s []T) string {
	if len(s) == 0 {
		return "[]"
	}
	p := make([]string, len(s))
	for i, v := range s {
		p[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(p, ",") + "]"
}

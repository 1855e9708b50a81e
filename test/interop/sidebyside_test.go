package interop

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The normalizers of TestSideBySideToolsLong (sidebyside_long_test.go): each maps a Kafka
// tool's output to what must be the same on two clusters that differ only in their
// controllers. What legitimately differs is what a process picks at random (topic and
// cluster ids, ports, replica placement and so leaders, producer ids, timestamps, the
// order of Java hash sets); everything else is kept.

var (
	sbsAddr     = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	sbsTopicID  = regexp.MustCompile(`(TopicId: )\S+`)
	sbsEpoch    = regexp.MustCompile(`(Epoch: )\d+`)
	sbsLogStamp = regexp.MustCompile(`^\[[^\]]*\] `)
)

// sbsAddrs replaces every host:port with the host and a placeholder port.
func sbsAddrs(s string) string { return sbsAddr.ReplaceAllString(s, "$1:<port>") }

// sbsTopicDescribe normalizes kafka-topics --describe. The topic line keeps everything but
// the topic id. A partition line keeps its topic; the partition number goes (which
// partitions a broker leads is random), the leader becomes its role (preferred: the first
// replica; other; none) and the replica, ISR, ELR and last known ELR lists their sorted
// members, with the broker killed (when killed > 0) as K and the others as B (which broker
// was killed is chosen by placement), or every broker as B (sbsAnyBroker). Partition lines are sorted. Each topic
// ends with how many partitions every broker of brokers is the preferred leader of, as
// sorted counts: a striped placement spreads them evenly, whatever its seed.
func sbsTopicDescribe(out string, brokers []int32, killed int32) string {
	return sbsDescribe(out, brokers, killed, false)
}

// sbsTopicDescribeOrdered is sbsTopicDescribe keeping the order of each replica list (as
// B and K), for a topic placed while a broker was fenced: Kafka puts a fenced broker last.
func sbsTopicDescribeOrdered(out string, brokers []int32, killed int32) string {
	return sbsDescribe(out, brokers, killed, true)
}

func sbsDescribe(out string, brokers []int32, killed int32, ordered bool) string {
	var res []string
	var parts []string
	preferred := map[int32]int{}
	flush := func() {
		if len(parts) == 0 && len(preferred) == 0 {
			return
		}
		slices.Sort(parts)
		res = append(res, parts...)
		var counts []int
		for _, b := range brokers {
			counts = append(counts, preferred[b])
		}
		slices.Sort(counts)
		res = append(res, fmt.Sprintf("preferred leaders per broker: %v", counts))
		parts, preferred = nil, map[int32]int{}
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		kv := sbsFields(trimmed)
		if _, ok := kv["Partition"]; !ok {
			flush()
			res = append(res, sbsTopicID.ReplaceAllString(trimmed, "${1}<id>"))
			continue
		}
		replicas := sbsIDs(kv["Replicas"])
		leader := kv["Leader"]
		role := "none"
		if id, err := strconv.Atoi(leader); err == nil && id >= 0 {
			role = "other"
			if len(replicas) > 0 && int32(id) == replicas[0] {
				role = "preferred"
			}
			if killed > 0 && int32(id) == killed {
				role += "(K)"
			}
		}
		if len(replicas) > 0 {
			preferred[replicas[0]]++
		}
		replicaList := sbsMembers(replicas, killed)
		if ordered {
			replicaList = sbsOrderedMembers(replicas, killed)
		}
		parts = append(parts, fmt.Sprintf("Topic: %s Leader: %s Replicas: %s Isr: %s Elr: %s LastKnownElr: %s",
			kv["Topic"], role, replicaList, sbsMembers(sbsIDs(kv["Isr"]), killed),
			sbsMembers(sbsIDs(kv["Elr"]), killed), sbsMembers(sbsIDs(kv["LastKnownElr"]), killed)))
	}
	flush()
	return strings.Join(res, "\n")
}

// sbsFields parses a tab-separated "Key: value" line of kafka-topics --describe.
func sbsFields(line string) map[string]string {
	kv := map[string]string{}
	for _, f := range strings.Split(line, "\t") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), ":")
		if ok {
			kv[k] = strings.TrimSpace(v)
		}
	}
	return kv
}

// sbsIDs parses a comma-separated broker id list ("" and "none" are empty).
func sbsIDs(s string) []int32 {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		if id, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			ids = append(ids, int32(id))
		}
	}
	return ids
}

// sbsOrderedMembers is a replica list in its order, as B and K (ids when killed is 0).
func sbsOrderedMembers(ids []int32, killed int32) string {
	var s []string
	for _, id := range ids {
		s = append(s, sbsMembers([]int32{id}, killed))
	}
	return strings.Join(s, ",")
}

// sbsAnyBroker, as sbsTopicDescribe's killed, writes every broker as B: a topic whose
// replicas are so few that which brokers hold them is placement's random choice.
const sbsAnyBroker int32 = -1

// sbsMembers is a replica list as sorted members: ids, or B and K while a broker is killed
// (every one B for sbsAnyBroker).
func sbsMembers(ids []int32, killed int32) string {
	var s []string
	for _, id := range ids {
		switch {
		case killed == 0:
			s = append(s, strconv.Itoa(int(id)))
		case id == killed:
			s = append(s, "K")
		default:
			s = append(s, "B")
		}
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

// sbsTopicIDs is the output with every topic id replaced (kafka-topics --describe of
// a topic whose replicas were assigned by hand: nothing else is random).
func sbsTopicIDs(out string) string {
	return strings.TrimSpace(sbsTopicID.ReplaceAllString(out, "${1}<id>"))
}

var sbsElection = regexp.MustCompile(`^(.*for partitions )(.*)$`)

// sbsElectionOutput normalizes kafka-leader-election: each "... for partitions a-1, b-2"
// line lists, instead of the partitions (a Java hash set's order, and which partitions
// placement made the killed broker lead), how many of each topic, by topic name.
func sbsElectionOutput(out string) string {
	var res []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		m := sbsElection.FindStringSubmatch(line)
		if m == nil {
			if strings.TrimSpace(line) != "" {
				res = append(res, line)
			}
			continue
		}
		counts := map[string]int{}
		for _, tp := range strings.Split(m[2], ", ") {
			if i := strings.LastIndexByte(tp, '-'); i > 0 {
				counts[tp[:i]]++
			}
		}
		var topics []string
		for topic, n := range counts {
			topics = append(topics, fmt.Sprintf("%s x%d", topic, n))
		}
		slices.Sort(topics)
		res = append(res, m[1]+strings.Join(topics, ", "))
	}
	return strings.Join(res, "\n")
}

// sbsSortedLines is the output's non-empty lines, sorted (records consumed from several
// partitions, in the order fetches returned them).
func sbsSortedLines(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// sbsTable normalizes a whitespace-aligned table whose header row starts with first:
// each row keeps only the columns of keep (by header name), rows are sorted, and lines
// outside the table are kept with their spaces collapsed.
func sbsTable(out, first string, keep ...string) string {
	var res, rows []string
	var header []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == first:
			header = f
			res = append(res, strings.Join(keep, " "))
		case header != nil && len(f) >= len(keep):
			var row []string
			for _, k := range keep {
				i := slices.Index(header, k)
				if i >= 0 && i < len(f) {
					row = append(row, f[i])
				} else {
					row = append(row, "?")
				}
			}
			rows = append(rows, strings.Join(row, " "))
		default:
			res = append(res, strings.Join(f, " "))
		}
	}
	slices.Sort(rows)
	return strings.Join(append(res, rows...), "\n")
}

// sbsGroupDescribe normalizes kafka-consumer-groups --describe: which partition got which
// record is the console producer's sticky partitioner's choice, so the rows of a topic
// fold into the sums of the committed offsets, log end offsets and lags; the members' ids
// and hosts go. How many rows a topic has goes too: a console consumer that stops at
// --max-messages commits only the partitions whose position it had fetched by then (a
// race), and the empty ones add nothing to the sums.
func sbsGroupDescribe(out string) string {
	type sum struct{ cur, end, lag int }
	sums := map[string]*sum{}
	var res []string
	var header []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "GROUP":
			header = f
		case header != nil && len(f) >= 6:
			key := f[0] + " " + f[1]
			s := sums[key]
			if s == nil {
				s = &sum{}
				sums[key] = s
			}
			n := func(v string) int { x, _ := strconv.Atoi(v); return x }
			s.cur += n(f[3])
			s.end += n(f[4])
			s.lag += n(f[5])
		default:
			res = append(res, strings.Join(f, " "))
		}
	}
	var rows []string
	for k, s := range sums {
		rows = append(rows, fmt.Sprintf("%s current=%d log-end=%d lag=%d", k, s.cur, s.end, s.lag))
	}
	slices.Sort(rows)
	return strings.Join(append(res, rows...), "\n")
}

// sbsEpochs replaces every "Epoch: n" (kafka-features' finalized features epoch, the
// offset of their last change in the metadata log) with a placeholder.
func sbsEpochs(out string) string {
	return strings.TrimSpace(sbsEpoch.ReplaceAllString(out, "${1}<n>"))
}

var sbsQuorumValue = regexp.MustCompile(`^(ClusterId|LeaderId|LeaderEpoch|HighWatermark|MaxFollowerLag|MaxFollowerLagTimeMs):\s+.*$`)

// sbsQuorumStatus normalizes kafka-metadata-quorum describe --status: the cluster id,
// which voter leads, in which epoch, how far the log and the followers are, and the
// directory ids differ from run to run, and so does the order of the observers; the
// voters and observers with their endpoints (ports aside) do not.
func sbsQuorumStatus(out string) string {
	var res []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if m := sbsQuorumValue.FindStringSubmatch(line); m != nil {
			line = m[1] + ": <n>"
		}
		// A Kafka leader keeps its observers in a hash map keyed by id and directory id.
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(k, "CurrentObservers") {
			v = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "[{"), "}]")
			entries := strings.Split(v, "}, {")
			slices.Sort(entries)
			line = k + ": [{" + strings.Join(entries, "}, {") + "}]"
		}
		res = append(res, sbsDirID.ReplaceAllString(sbsAddrs(line), `"directoryId": "<dir>"`))
	}
	return strings.Join(res, "\n")
}

var sbsDirID = regexp.MustCompile(`"directoryId": ?"[^"]*"`)

// sbsAPIVersions normalizes kafka-broker-api-versions: the brokers' blocks (each
// "host:port (id: N ...) -> (" and its api lines) sorted by their text once ports are
// dropped, as the tool prints them in its metadata's order.
func sbsAPIVersions(out string) string {
	var blocks []string
	var cur []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasSuffix(line, "-> (") && len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
		cur = append(cur, sbsAddrs(line))
	}
	if len(cur) > 0 {
		blocks = append(blocks, strings.Join(cur, "\n"))
	}
	slices.Sort(blocks)
	return strings.Join(blocks, "\n")
}

// sbsReplication normalizes kafka-metadata-quorum describe --replication to each row's
// status and whether its directory id is unknown (the zero id static voters have) or
// not, sorted: which voter leads, the offsets, lags and timestamps differ from run to run.
func sbsReplication(out string) string {
	var header, rows []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if header == nil {
			header = f
			continue
		}
		row := map[string]string{}
		for i, h := range header {
			if i < len(f) {
				row[h] = f[i]
			}
		}
		dir := "directory id set"
		if row["DirectoryId"] == "AAAAAAAAAAAAAAAAAAAAAA" {
			dir = "directory id zero"
		}
		rows = append(rows, row["Status"]+" "+dir)
	}
	slices.Sort(rows)
	return strings.Join(append([]string{strings.Join(header, " ")}, rows...), "\n")
}

var sbsLocalController = regexp.MustCompile(`(Local controller )\d+`)

// sbsEntityConfigs normalizes kafka-configs --describe of users, clients and ips: each
// "... configs for <entity> are k=v, k=v" line with its items sorted, as a broker lists a
// user's SCRAM mechanisms in the order of a Java hash map keyed by an enum (which differs
// from one JVM to the next).
func sbsEntityConfigs(out string) string {
	var res []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if i := strings.Index(line, " are "); i >= 0 && strings.Contains(line[:i], "configs for ") {
			items := strings.Split(line[i+len(" are "):], ", ")
			slices.Sort(items)
			line = line[:i+len(" are ")] + strings.Join(items, ", ")
		}
		res = append(res, line)
	}
	return strings.Join(res, "\n")
}

var sbsPartition = regexp.MustCompile(`\b(sbs-[a-z]+(?:-[a-z]+)*)-\d+\b`)

// sbsToolFailure normalizes a failed tool run: its exit code, then its stdout's and its
// stderr's lines (stack frames, warnings, log lines' timestamps and ports dropped), each sorted
// with partition numbers of the script's topics (sbs-*) dropped: a tool reporting
// several partitions lists them in a Java hash map's order, and which partitions fail
// follows placement.
func sbsToolFailure(code int, stdout, stderr string) string {
	lines := func(s, prefix string) []string {
		var res []string
		for _, l := range strings.Split(s, "\n") {
			t := strings.TrimSpace(l)
			t = sbsLogStamp.ReplaceAllString(t, "")
			// Stack frames, and the client's warnings about a broker the script killed.
			if t == "" || strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "... ") || strings.HasPrefix(t, "WARN ") {
				continue
			}
			t = sbsPartition.ReplaceAllString(sbsAddrs(t), "$1-<n>")
			// Which controller is active (and so answers) is the quorum's election.
			t = sbsLocalController.ReplaceAllString(t, "${1}<n>")
			res = append(res, prefix+t)
		}
		slices.Sort(res)
		return res
	}
	res := []string{fmt.Sprintf("exit %d", code)}
	res = append(res, lines(stdout, "out: ")...)
	return strings.Join(append(res, lines(stderr, "err: ")...), "\n")
}

func TestSideBySideNormalizers(t *testing.T) {
	brokers := []int32{101, 102, 103}
	describe := "Topic: t\tTopicId: AAAAAAAAAAAAAAAAAAAAAA\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n" +
		"\tTopic: t\tPartition: 0\tLeader: 102\tReplicas: 101,102,103\tIsr: 102,103\tElr: \tLastKnownElr: \n" +
		"\tTopic: t\tPartition: 1\tLeader: 102\tReplicas: 102,103,101\tIsr: 102,103,101\tElr: \tLastKnownElr: \n" +
		"\tTopic: t\tPartition: 2\tLeader: none\tReplicas: 103,101,102\tIsr: 101\tElr: 103\tLastKnownElr: 102\n"
	want := "Topic: t\tTopicId: <id>\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n" +
		"Topic: t Leader: none Replicas: 101,102,103 Isr: 101 Elr: 103 LastKnownElr: 102\n" +
		"Topic: t Leader: other Replicas: 101,102,103 Isr: 102,103 Elr:  LastKnownElr: \n" +
		"Topic: t Leader: preferred Replicas: 101,102,103 Isr: 101,102,103 Elr:  LastKnownElr: \n" +
		"preferred leaders per broker: [1 1 1]"
	if got := sbsTopicDescribe(describe, brokers, 0); got != want {
		t.Errorf("describe:\n%s\nwant:\n%s", got, want)
	}
	if got := sbsTopicDescribeOrdered(describe, brokers, 101); !strings.Contains(got, "Leader: none Replicas: B,K,B Isr: K Elr: B LastKnownElr: B") {
		t.Errorf("describe, ordered:\n%s", got)
	}
	if got := sbsTopicDescribe(describe, brokers, sbsAnyBroker); !strings.Contains(got, "Leader: none Replicas: B,B,B Isr: B Elr: B LastKnownElr: B") {
		t.Errorf("describe, any broker:\n%s", got)
	}
	killed := sbsTopicDescribe(describe, brokers, 101)
	for _, w := range []string{"Leader: other Replicas: B,B,K Isr: B,B Elr:", "Leader: none Replicas: B,B,K Isr: K Elr: B LastKnownElr: B"} {
		if !strings.Contains(killed, w) {
			t.Errorf("describe with 101 killed lacks %q:\n%s", w, killed)
		}
	}

	election := "Successfully completed leader election (PREFERRED) for partitions b-1, a-10, a-3\n"
	if got, want := sbsElectionOutput(election), "Successfully completed leader election (PREFERRED) for partitions a x2, b x1"; got != want {
		t.Errorf("election: %q, want %q", got, want)
	}

	groups := "\nConsumer group 'g' has no active members.\n\n" +
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n" +
		"g               t               0          7               7               0               -               -               -\n" +
		"g               t               1          3               4               1               -               -               -\n"
	if got, want := sbsGroupDescribe(groups), "Consumer group 'g' has no active members.\ng t current=10 log-end=11 lag=1"; got != want {
		t.Errorf("groups: %q, want %q", got, want)
	}

	txs := "TransactionalId   \tCoordinator\tProducerId\tTransactionState \nsbs-tx            \t102        \t7         \tCompleteCommit   \n"
	if got, want := sbsTable(txs, "TransactionalId", "TransactionalId", "TransactionState"), "TransactionalId TransactionState\nsbs-tx CompleteCommit"; got != want {
		t.Errorf("table: %q, want %q", got, want)
	}

	status := "LeaderId:   2\nCurrentObservers:  [{\"id\": 103, \"directoryId\": \"x\"}, {\"id\": 101, \"directoryId\": \"y\"}]\n"
	if got, want := sbsQuorumStatus(status), "LeaderId: <n>\nCurrentObservers: [{\"id\": 101, \"directoryId\": \"<dir>\"}, {\"id\": 103, \"directoryId\": \"<dir>\"}]"; got != want {
		t.Errorf("quorum status: %q, want %q", got, want)
	}

	versions := "127.0.0.1:2 (id: 102 rack: null isFenced: false) -> (\n\tProduce(0): 3 to 13 [usable: 13]\n)\n" +
		"127.0.0.1:1 (id: 101 rack: null isFenced: false) -> (\n\tProduce(0): 3 to 13 [usable: 13]\n)\n"
	if got, want := sbsAPIVersions(versions), "127.0.0.1:<port> (id: 101 rack: null isFenced: false) -> (\n\tProduce(0): 3 to 13 [usable: 13]\n)\n"+
		"127.0.0.1:<port> (id: 102 rack: null isFenced: false) -> (\n\tProduce(0): 3 to 13 [usable: 13]\n)"; got != want {
		t.Errorf("api versions:\n%s\nwant:\n%s", got, want)
	}

	replication := "NodeId\tDirectoryId           \tLogEndOffset\tLag\tStatus  \n2\tAAAAAAAAAAAAAAAAAAAAAA\t100\t0\tLeader  \n101\tx1zQmV3tT2mXz9fdd8nk0A\t99\t1\tObserver\n"
	if got, want := sbsReplication(replication), "NodeId DirectoryId LogEndOffset Lag Status\nLeader directory id zero\nObserver directory id set"; got != want {
		t.Errorf("replication: %q, want %q", got, want)
	}

	scram := "SCRAM credential configs for user-principal 'u' are SCRAM-SHA-512=iterations=4096, SCRAM-SHA-256=iterations=8192\n"
	if got, want := sbsEntityConfigs(scram), "SCRAM credential configs for user-principal 'u' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096"; got != want {
		t.Errorf("entity configs: %q, want %q", got, want)
	}
	if got := sbsToolFailure(1, "Invalid update version 7 for feature g. Local controller 3 only supports versions 0-1\n", ""); !strings.Contains(got, "Local controller <n> only") {
		t.Errorf("failure with a controller id: %q", got)
	}

	if got, want := sbsEpochs("Feature: metadata.version\tFinalizedVersionLevel: 4.4-IV2\tEpoch: 57\n"), "Feature: metadata.version\tFinalizedVersionLevel: 4.4-IV2\tEpoch: <n>"; got != want {
		t.Errorf("features: %q, want %q", got, want)
	}

	fail := sbsToolFailure(1, "Error completing leader election (PREFERRED) for partition: sbs-b-c-7: E\nError completing leader election (PREFERRED) for partition: sbs-a-12: E\n",
		"[2026-01-01 10:00:00,000] ERROR org.apache.kafka.common.errors.TopicExistsException: Topic 't' already exists. (org.apache.kafka.tools.TopicCommand)\n\tat org.apache.kafka.X.y(X.java:1)\n... 3 more\n[2026-01-01 10:00:00,000] WARN Connection to node -1 (/127.0.0.1:1) could not be established.\nbootstrap 127.0.0.1:40123\n")
	wantFail := "exit 1\nout: Error completing leader election (PREFERRED) for partition: sbs-a-<n>: E\n" +
		"out: Error completing leader election (PREFERRED) for partition: sbs-b-c-<n>: E\n" +
		"err: ERROR org.apache.kafka.common.errors.TopicExistsException: Topic 't' already exists. (org.apache.kafka.tools.TopicCommand)\n" +
		"err: bootstrap 127.0.0.1:<port>"
	if fail != wantFail {
		t.Errorf("failure:\n%s\nwant:\n%s", fail, wantFail)
	}
}

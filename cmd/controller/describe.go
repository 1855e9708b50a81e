package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/uuid"
)

// runDescribeQuorum does what `kafka-metadata-quorum describe
// --status|--replication` does: DescribeCluster to a bootstrap controller to
// learn the cluster id and the leader, then DescribeQuorum to the leader (or
// both to a bootstrap broker), and prints the same text.
func runDescribeQuorum(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("describe-quorum", stderr)
	var conn connFlags
	conn.register(fs)
	status := fs.Bool("status", false, "print the quorum status (as describe --status)")
	replication := fs.Bool("replication", false, "print the replication table (as describe --replication)")
	human := fs.Bool("human-readable", false, "with --replication: timestamps as '<n> ms ago'")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, props, err := conn.load()
	if err != nil {
		return err
	}
	if err := checkDescribeFlags(*status, *replication, *human); err != nil {
		return err
	}
	ctx, cancel, err := conn.context(props)
	if err != nil {
		return err
	}
	defer cancel()
	q, err := admin.DescribeQuorum(ctx, b)
	if err != nil {
		return err
	}
	if *status {
		return printQuorumStatus(stdout, q)
	}
	return printQuorumReplication(stdout, q, *human, time.Now())
}

// checkDescribeFlags accepts what `kafka-metadata-quorum describe` accepts,
// failing with its messages.
func checkDescribeFlags(status, replication, human bool) error {
	switch {
	case status && replication:
		return toolError{"Only one of --status or --replication should be specified with describe sub-command"}
	case status && human:
		return toolError{"The option --human-readable is only supported along with --replication"}
	case !status && !replication:
		return toolError{"One of --status or --replication must be specified with describe sub-command"}
	}
	return nil
}

// quorumLeader is the leader's entry among the current voters.
func quorumLeader(q *admin.Quorum) (kmsg.DescribeQuorumResponseTopicPartitionReplicaState, error) {
	for _, v := range q.Partition.CurrentVoters {
		if v.ReplicaID == q.Partition.LeaderID {
			return v, nil
		}
	}
	return kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}, fmt.Errorf("leader %d is not among the current voters", q.Partition.LeaderID)
}

// printQuorumStatus prints `kafka-metadata-quorum describe --status`.
func printQuorumStatus(w io.Writer, q *admin.Quorum) error {
	leader, err := quorumLeader(q)
	if err != nil {
		return err
	}
	laggard := q.Partition.CurrentVoters[0]
	for _, v := range q.Partition.CurrentVoters[1:] {
		if v.LogEndOffset < laggard.LogEndOffset {
			laggard = v
		}
	}
	maxLag := leader.LogEndOffset - laggard.LogEndOffset
	var lagTime int64
	switch {
	case laggard.ReplicaID == leader.ReplicaID && laggard.ReplicaDirectoryID == leader.ReplicaDirectoryID:
		lagTime = 0
	case leader.LastCaughtUpTimestamp != -1 && laggard.LastCaughtUpTimestamp != -1:
		lagTime = leader.LastCaughtUpTimestamp - laggard.LastCaughtUpTimestamp
	default:
		lagTime = -1
	}
	fmt.Fprintf(w, "ClusterId:              %s\n", q.ClusterID)
	fmt.Fprintf(w, "LeaderId:               %d\n", q.Partition.LeaderID)
	fmt.Fprintf(w, "LeaderEpoch:            %d\n", q.Partition.LeaderEpoch)
	fmt.Fprintf(w, "HighWatermark:          %d\n", q.Partition.HighWatermark)
	fmt.Fprintf(w, "MaxFollowerLag:         %d\n", maxLag)
	fmt.Fprintf(w, "MaxFollowerLagTimeMs:   %d\n", lagTime)
	fmt.Fprintf(w, "CurrentVoters:          %s\n", replicaList(q, q.Partition.CurrentVoters))
	fmt.Fprintf(w, "CurrentObservers:       %s\n", replicaList(q, q.Partition.Observers))
	return nil
}

// replicaList renders replicas as Kafka's MetadataQuorumCommand.Node does.
func replicaList(q *admin.Quorum, rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": %d`, r.ReplicaID)
		if r.ReplicaDirectoryID != [16]byte{} {
			fmt.Fprintf(&b, `, "directoryId": "%s"`, uuid.UUID(r.ReplicaDirectoryID))
		}
		if eps := endpoints(q, r.ReplicaID); len(eps) > 0 {
			b.WriteString(`, "endpoints": [`)
			for j, e := range eps {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(`"` + e + `"`)
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

func endpoints(q *admin.Quorum, id int32) []string {
	var out []string
	for _, n := range q.Nodes {
		if n.NodeID != id {
			continue
		}
		for _, l := range n.Listeners {
			out = append(out, l.Name+"://"+net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
		}
	}
	return out
}

// printQuorumReplication prints `kafka-metadata-quorum describe --replication`:
// each cell padded to its column's widest cell and followed by a tab.
func printQuorumReplication(w io.Writer, q *admin.Quorum, human bool, now time.Time) error {
	leader, err := quorumLeader(q)
	if err != nil {
		return err
	}
	rows, err := replicationRows(q, leader, replicaTimestamp(human, now))
	if err != nil {
		return err
	}
	header := []string{"NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"}
	printTable(w, header, rows)
	return nil
}

// replicationRows lists the leader, then the other voters, then the
// observers, with each one's lag behind the leader's log end.
func replicationRows(q *admin.Quorum, leader kmsg.DescribeQuorumResponseTopicPartitionReplicaState, ts func(v int64, desc string) (string, error)) ([][]string, error) {
	var followers []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	for _, v := range q.Partition.CurrentVoters {
		if v.ReplicaID != leader.ReplicaID {
			followers = append(followers, v)
		}
	}
	groups := []struct {
		status   string
		replicas []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	}{
		{"Leader", []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{leader}},
		{"Follower", followers},
		{"Observer", q.Partition.Observers},
	}
	var rows [][]string
	for _, g := range groups {
		for _, r := range g.replicas {
			lf, err := ts(r.LastFetchTimestamp, "last fetch")
			if err != nil {
				return nil, err
			}
			lc, err := ts(r.LastCaughtUpTimestamp, "last caught up")
			if err != nil {
				return nil, err
			}
			rows = append(rows, []string{
				strconv.Itoa(int(r.ReplicaID)), uuid.UUID(r.ReplicaDirectoryID).String(),
				strconv.FormatInt(r.LogEndOffset, 10), strconv.FormatInt(leader.LogEndOffset-r.LogEndOffset, 10),
				lf, lc, g.status,
			})
		}
	}
	return rows, nil
}

// replicaTimestamp formats a replica's timestamp (desc names it in errors):
// -1 (unknown) as is, otherwise epoch milliseconds or, when human, "<n> ms
// ago", which fails for a time not in the past (clock drift).
func replicaTimestamp(human bool, now time.Time) func(v int64, desc string) (string, error) {
	return func(v int64, desc string) (string, error) {
		if v == -1 {
			return "-1", nil
		}
		if !human {
			return strconv.FormatInt(v, 10), nil
		}
		nowMs := now.UnixMilli()
		if v <= 0 || v > nowMs {
			return "", fmt.Errorf("error while computing relative time, possible drift in system clock.\nCurrent timestamp is %d, %s timestamp is %d", nowMs, desc, v)
		}
		return fmt.Sprintf("%d ms ago", nowMs-v), nil
	}
}

// printTable prints header and rows, each cell padded to its column's
// widest cell and followed by a tab.
func printTable(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, cells := range append([][]string{header}, rows...) {
		var b strings.Builder
		for i, c := range cells {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-len(c)))
			b.WriteByte('\t')
		}
		fmt.Fprintln(w, b.String())
	}
}

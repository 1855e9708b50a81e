package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kraftd/kraftd/raft"
)

// kafkaPrefix is what the Prometheus JMX exporter makes of the MBean
// kafka.server:type=raft-metrics.
const kafkaPrefix = "kafka_server_raft_metrics_"

// KafkaStates are the values of Kafka 4.4's current-state, in the order
// KafkaRaftMetrics tests them.
var KafkaStates = []string{"leader", "prospective", "prospective-voted", "candidate", "unattached-voted",
	"observer", "follower", "unattached"}

// KafkaState is Kafka 4.4's current-state for a status. As in Kafka, a
// Resigned leader reads unattached, an observer reads observer only while
// following, and a vote recorded by a follower does not show.
func KafkaState(st raft.Status) string {
	switch st.Role {
	case raft.RoleLeader:
		return "leader"
	case raft.RoleProspective:
		if st.VotedID >= 0 {
			return "prospective-voted"
		}
		return "prospective"
	case raft.RoleCandidate:
		return "candidate"
	case raft.RoleVoted:
		return "unattached-voted"
	case raft.RoleFollower:
		if !st.IsVoter {
			return "observer"
		}
		return "follower"
	}
	return "unattached"
}

// kafkaVote is Kafka 4.4's current-vote: this node as leader or candidate,
// none (-1) once resigned, else the vote recorded in the epoch (-1 if none).
func kafkaVote(st raft.Status) int32 {
	switch st.Role {
	case raft.RoleLeader, raft.RoleCandidate:
		return st.NodeID
	case raft.RoleResigned:
		return -1
	}
	return st.VotedID
}

// kafkaHighWatermark is Kafka's high-watermark: unknown (-1) on a leader
// until it commits in its epoch and on a resigned one, whose states start
// without one; the others keep what they knew.
func kafkaHighWatermark(st raft.Status) int64 {
	if st.Role == raft.RoleResigned || (st.Role == raft.RoleLeader && !st.CommittedInEpoch) {
		return -1
	}
	return st.HighWatermark
}

func kafkaDesc(attr, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(kafkaPrefix+attr, help, labels, nil)
}

// kafkaDescs are the raft-metrics attributes with Kafka's descriptions.
var kafkaDescs = struct {
	state, leader, vote, epoch, hw, leo, lee, unknown, voters, observers, change *prometheus.Desc
	commitAvg, commitMax, electionAvg, electionMax, fetchRate, appendRate, idle  *prometheus.Desc
}{
	state:       kafkaDesc("current_state", "The current state of this member; 1 for the state label that holds.", "state"),
	leader:      kafkaDesc("current_leader", "The current quorum leader's id; -1 indicates unknown"),
	vote:        kafkaDesc("current_vote", "The current voted id; -1 indicates not voted for anyone"),
	epoch:       kafkaDesc("current_epoch", "The current quorum epoch."),
	hw:          kafkaDesc("high_watermark", "The high watermark maintained on this member; -1 if it is unknown"),
	leo:         kafkaDesc("log_end_offset", "The current raft log end offset."),
	lee:         kafkaDesc("log_end_epoch", "The current raft log end epoch."),
	unknown:     kafkaDesc("number_unknown_voter_connections", "Number of unknown voters whose connection information is not cached; would never be larger than quorum-size."),
	voters:      kafkaDesc("number_of_voters", "Number of voters for a KRaft topic partition."),
	observers:   kafkaDesc("number_of_observers", "Number of observers being tracked by the KRaft topic partition leader."),
	change:      kafkaDesc("uncommitted_voter_change", "1 if there is a voter change that has not been committed, 0 otherwise."),
	commitAvg:   kafkaDesc("commit_latency_avg", "The average time in milliseconds to commit an entry in the raft log."),
	commitMax:   kafkaDesc("commit_latency_max", "The maximum time in milliseconds to commit an entry in the raft log."),
	electionAvg: kafkaDesc("election_latency_avg", "The average time in milliseconds spent on electing a new leader."),
	electionMax: kafkaDesc("election_latency_max", "The maximum time in milliseconds spent on electing a new leader."),
	fetchRate:   kafkaDesc("fetch_records_rate", "The average number of records fetched from the leader of the raft quorum."),
	appendRate:  kafkaDesc("append_records_rate", "The average number of records appended per sec as the leader of the raft quorum."),
	idle:        kafkaDesc("poll_idle_ratio_avg", "The ratio of time the Raft IO thread is idle as opposed to doing work (e.g. handling requests or replicating from the leader)"),
}

// kafkaCollector exports the raft-metrics of the latest View and of Raft's
// windows at scrape time.
type kafkaCollector struct {
	src Source
	r   *Raft
}

func (c kafkaCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c kafkaCollector) Collect(ch chan<- prometheus.Metric) {
	v, ok := c.src()
	if !ok {
		return
	}
	st := v.Status
	d := &kafkaDescs
	gauge := func(desc *prometheus.Desc, val float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, val, labels...)
	}
	state := KafkaState(st)
	for _, s := range KafkaStates {
		gauge(d.state, b2f(s == state), s)
	}
	gauge(d.leader, float64(st.LeaderID))
	gauge(d.vote, float64(kafkaVote(st)))
	gauge(d.epoch, float64(st.Epoch))
	gauge(d.hw, float64(kafkaHighWatermark(st)))
	gauge(d.leo, float64(st.LogEndOffset))
	gauge(d.lee, float64(st.LogEndEpoch))
	// Kafka reports 0 too: every voter's address is known (configured, or
	// in the voter set's endpoints).
	gauge(d.unknown, 0)
	gauge(d.voters, float64(st.Voters.Len()))
	if st.Role == raft.RoleLeader { // Kafka registers these on the leader only
		gauge(d.observers, float64(st.Observers))
		gauge(d.change, b2f(st.VoterChangePending))
	}
	now := c.r.now()
	gauge(d.commitAvg, c.r.commit.avg(now))
	gauge(d.commitMax, c.r.commit.maximum(now))
	gauge(d.electionAvg, c.r.election.avg(now))
	gauge(d.electionMax, c.r.election.maximum(now))
	gauge(d.fetchRate, c.r.fetched.rate(now))
	gauge(d.appendRate, c.r.appended.rate(now))
	gauge(d.idle, c.r.idle.measure())
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

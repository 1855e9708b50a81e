package interop

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/controller/placement"
)

// kafkaReplication runs testdata/KafkaReplication.java, Kafka 4.4.0's
// StripedReplicaPlacer and PartitionChangeBuilder, over commands and returns
// one answer line per command.
func kafkaReplication(t *testing.T, commands []string) []string {
	t.Helper()
	cmd := javaProgram(t, "KafkaReplication")()
	cmd.Stdin = strings.NewReader(strings.Join(commands, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
		}
	}()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("KafkaReplication: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(commands) {
		t.Fatalf("KafkaReplication answered %d lines to %d commands\n%s", len(lines), len(commands), stderr.Bytes())
	}
	return lines
}

// javaErr renders a Go error the way the Java program does: the exception's
// simple class name and its message in hex.
func javaErr(class, msg string) string {
	return "ERR " + class + " " + hex.EncodeToString([]byte(msg))
}

// Kafka's java.util.Random and kraftd's JavaRandom draw the same numbers from
// the same seeds, power-of-two bounds and rejection sampling included.
func TestJavaRandomAgainstKafka(t *testing.T) {
	r := rand.New(rand.NewPCG(corpusSeed(t), 1))
	var cmds []string
	var want []string
	for range 200 {
		seed := r.Int64() - r.Int64()
		var bounds []string
		var got []string
		jr := placement.NewJavaRandom(seed)
		for range 1 + r.IntN(30) {
			var b int32
			switch r.IntN(4) {
			case 0:
				b = 1 << r.IntN(31)
			case 1:
				b = int32(1 + r.IntN(20))
			case 2:
				b = int32(1<<30 + r.IntN(1<<30)) // rejections are frequent
			default:
				b = int32(1 + r.IntN(1<<31-1))
			}
			bounds = append(bounds, strconv.Itoa(int(b)))
			got = append(got, strconv.Itoa(int(jr.NextInt(b))))
		}
		cmds = append(cmds, fmt.Sprintf("random %d %s", seed, strings.Join(bounds, ",")))
		want = append(want, "OK "+strings.Join(got, " "))
	}
	for i, line := range kafkaReplication(t, cmds) {
		if line != want[i] {
			t.Fatalf("%s\nkafka:  %s\nkraftd: %s", cmds[i], line, want[i])
		}
	}
}

// placementCase is a cluster and the placements asked of one placer.
type placementCase struct {
	seed    int64
	brokers []placement.Broker
	specs   []placement.Spec
}

func (c placementCase) command() string {
	var bs []string
	for _, b := range c.brokers {
		rack := "-"
		if b.Rack != nil {
			rack = "x" + hex.EncodeToString([]byte(*b.Rack))
		}
		f := "0"
		if b.Fenced {
			f = "1"
		}
		bs = append(bs, fmt.Sprintf("%d/%s/%s", b.ID, f, rack))
	}
	var ss []string
	for _, s := range c.specs {
		ss = append(ss, fmt.Sprintf("%d:%d", s.NumPartitions, s.NumReplicas))
	}
	return fmt.Sprintf("place %d %s %s", c.seed, strings.Join(bs, ";"), strings.Join(ss, ","))
}

// answer is what kraftd's placer answers, in the Java program's form.
func (c placementCase) answer() string {
	rnd := placement.NewJavaRandom(c.seed)
	var out []string
	start := int32(0)
	for _, s := range c.specs {
		s.StartPartition = start
		start += s.NumPartitions
		parts, err := placement.Place(s, c.brokers, rnd)
		if err != nil {
			out = append(out, javaErr("InvalidReplicationFactorException", err.Error()))
			continue
		}
		var ps []string
		for _, p := range parts {
			var rs []string
			for _, r := range p {
				rs = append(rs, strconv.Itoa(int(r)))
			}
			ps = append(ps, strings.Join(rs, ","))
		}
		out = append(out, strings.Join(ps, ";"))
	}
	return "OK " + strings.Join(out, "|")
}

// rackNames has names whose Java hashes collide in a HashMap ("Aa" and "BB"
// hash alike, so do their concatenations), names of characters beyond the
// BMP (sorted differently by UTF-16 and UTF-8), and the empty name.
var rackNames = []string{"a", "b", "c", "rack-1", "rack-2", "rack-10", "Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa",
	"", "\ufb01", "\U0001F600", "us-east-1a", "us-east-1b", "us-east-1c", "z"}

func randomPlacementCase(r *rand.Rand) placementCase {
	c := placementCase{seed: r.Int64() - r.Int64()}
	n := 1 + r.IntN(24)
	numRacks := r.IntN(min(n, 8) + 1) // 0: no racks at all
	racks := make([]*string, numRacks)
	for i := range racks {
		if r.IntN(6) > 0 || i == 0 {
			name := rackNames[r.IntN(len(rackNames))]
			racks[i] = &name
		}
	}
	used := map[int32]bool{}
	fencedShare := []int{0, 0, 10, 30, 60, 100}[r.IntN(6)]
	for len(c.brokers) < n {
		id := int32(r.IntN(3 * n))
		if r.IntN(10) == 0 {
			id = int32(r.IntN(1 << 20))
		}
		if used[id] {
			continue
		}
		used[id] = true
		b := placement.Broker{ID: id, Fenced: r.IntN(100) < fencedShare}
		if numRacks > 0 {
			b.Rack = racks[r.IntN(numRacks)]
		}
		c.brokers = append(c.brokers, b)
	}
	for range 1 + r.IntN(3) {
		rf := int16(1 + r.IntN(min(n, 6)))
		switch r.IntN(20) {
		case 0:
			rf = int16(n + 1 + r.IntN(3))
		case 1:
			rf = int16(-r.IntN(2))
		}
		c.specs = append(c.specs, placement.Spec{NumPartitions: int32(1 + r.IntN(40)), NumReplicas: rf})
	}
	return c
}

// Kafka 4.4.0's StripedReplicaPlacer is the judge: on random clusters (racks
// or none, colliding and non-BMP rack names, fenced brokers in any share,
// broker ids in any order) and specs (replication factors too large or not
// positive included), fed the same java.util.Random seed, kraftd's placer
// returns the same replica lists, in the same order, and the same errors and
// messages; several placements on one placer share its random stream.
func TestPlacementAgainstKafka(t *testing.T) {
	r := rand.New(rand.NewPCG(corpusSeed(t), 2))
	var cases []placementCase
	for range 3000 {
		cases = append(cases, randomPlacementCase(r))
	}
	cmds := make([]string, len(cases))
	for i, c := range cases {
		cmds[i] = c.command()
	}
	errors, placed := 0, 0
	for i, line := range kafkaReplication(t, cmds) {
		if want := cases[i].answer(); line != want {
			t.Fatalf("case %d: %s\nkafka:  %s\nkraftd: %s", i, cmds[i], line, want)
		}
		errors += strings.Count(line, "ERR ")
		placed += strings.Count(line, "|") + 1 - strings.Count(line, "ERR ")
	}
	t.Logf("%d cases: %d placements agree, %d errors agree", len(cases), placed, errors)
}

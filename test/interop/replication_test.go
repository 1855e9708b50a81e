package interop

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/controller/partitionchange"
	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// kafkaReplication runs testdata/KafkaReplication.java, Kafka 4.4.0's
// StripedReplicaPlacer and PartitionChangeBuilder, over commands and returns
// one answer line per command.
func kafkaReplication(t *testing.T, commands []string) []string {
	t.Helper()
	out, stderr := runJava(t, "KafkaReplication", strings.NewReader(strings.Join(commands, "\n")+"\n"))
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(commands) {
		t.Fatalf("KafkaReplication answered %d lines to %d commands\n%s", len(lines), len(commands), stderr)
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
func TestPlacementAgainstKafka(t *testing.T) { comparePlacements(t, 3000) }

func comparePlacements(t *testing.T, n int) {
	r := rand.New(rand.NewPCG(corpusSeed(t), 2))
	var cases []placementCase
	for range n {
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

// changeCase is a partition, the cluster's view and a requested change.
type changeCase struct {
	p        partitionchange.Partition
	ctx      partitionchange.Context
	accept   []int32
	defaults map[int32]uuid.UUID // nil: no default directory provider
	lkl      bool

	tisr, treplicas, tremoving, tadding, unclean []int32
	setISR, setReplicas, setRemoving, setAdding  bool
	tlrs                                         int8
	setLRS                                       bool
	election                                     partitionchange.Election
	setdirs                                      [][2]string
}

// caseDir is the default directory the Java program gives a broker it was
// told nothing about.
func caseDir(broker int32) uuid.UUID {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[8:], uint64(1000+int64(broker)))
	return u
}

func ints(s []int32) string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Itoa(int(v))
	}
	return strings.Join(out, ",")
}

func (c *changeCase) command() string {
	f := []string{"change",
		"mv=" + strconv.Itoa(int(c.ctx.MetadataVersion)),
		"elr=" + b01(c.ctx.ELR), "lkl=" + b01(c.lkl),
		"minisr=" + strconv.Itoa(c.ctx.MinISR),
		"topic=" + c.ctx.TopicID.String(), "part=" + strconv.Itoa(int(c.ctx.PartitionID)),
		"replicas=" + ints(c.p.Replicas), "isr=" + ints(c.p.ISR),
		"removing=" + ints(c.p.Removing), "adding=" + ints(c.p.Adding),
		"pelr=" + ints(c.p.ELR), "plke=" + ints(c.p.LastKnownELR),
		"leader=" + strconv.Itoa(int(c.p.Leader)), "lrs=" + strconv.Itoa(int(c.p.LeaderRecoveryState)),
		"lepoch=" + strconv.Itoa(int(c.p.LeaderEpoch)), "pepoch=" + strconv.Itoa(int(c.p.PartitionEpoch)),
		"accept=" + ints(c.accept),
	}
	dirs := make([]string, len(c.p.Replicas))
	for i := range dirs {
		d := uuid.UUID{}
		if c.p.Directories != nil {
			d = c.p.Directories[i]
		}
		dirs[i] = d.String()
	}
	f = append(f, "dirs="+strings.Join(dirs, ","))
	if c.defaults != nil {
		var ds []string
		for b, d := range c.defaults {
			ds = append(ds, fmt.Sprintf("%d:%s", b, d))
		}
		f = append(f, "defaults="+strings.Join(ds, ","))
	}
	if c.setISR {
		f = append(f, "tisr="+ints(c.tisr))
	}
	if c.setReplicas {
		f = append(f, "treplicas="+ints(c.treplicas))
	}
	if c.setRemoving {
		f = append(f, "tremoving="+ints(c.tremoving))
	}
	if c.setAdding {
		f = append(f, "tadding="+ints(c.tadding))
	}
	if c.setLRS {
		f = append(f, "tlrs="+strconv.Itoa(int(c.tlrs)))
	}
	if c.unclean != nil {
		f = append(f, "unclean="+ints(c.unclean))
	}
	f = append(f, "election="+c.election.String())
	for _, d := range c.setdirs {
		f = append(f, "setdir="+d[0]+":"+d[1])
	}
	return strings.Join(f, " ")
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// answer is kraftd's builder's answer in the Java program's form (without
// Kafka's JSON).
func (c *changeCase) answer(t *testing.T) string {
	ctx := c.ctx
	ctx.Acceptable = func(b int32) bool { return slices.Contains(c.accept, b) }
	if c.defaults != nil {
		ctx.DefaultDir = func(b int32) uuid.UUID {
			if d, ok := c.defaults[b]; ok {
				return d
			}
			return caseDir(b)
		}
	}
	b := partitionchange.New(c.p, ctx).SetUseLastKnownLeader(c.lkl).SetElection(c.election)
	if c.setISR {
		b.SetTargetISR(c.tisr)
	}
	if c.setReplicas {
		b.SetTargetReplicas(c.treplicas)
	}
	if c.setRemoving {
		b.SetTargetRemoving(c.tremoving)
	}
	if c.setAdding {
		b.SetTargetAdding(c.tadding)
	}
	if c.setLRS {
		b.SetTargetLeaderRecoveryState(c.tlrs)
	}
	if c.unclean != nil {
		b.SetUncleanShutdownReplicas(c.unclean)
	}
	for _, d := range c.setdirs {
		id, _ := strconv.Atoi(d[0])
		dir, err := uuid.Parse(d[1])
		if err != nil {
			t.Fatal(err)
		}
		b.SetDirectory(int32(id), dir)
	}
	rec, version, err := b.Build()
	switch {
	case errors.Is(err, partitionchange.ErrNoDefaultDir):
		return javaErr("IllegalStateException", "DefaultDirProvider is not set")
	case err != nil:
		t.Fatalf("%s: %v", c.command(), err)
	case rec == nil:
		return "NONE"
	}
	value, err := metadata.Append(nil, rec, version)
	if err != nil {
		return "ERR encode " + err.Error()
	}
	return fmt.Sprintf("OK %d %s", version, hex.EncodeToString(value))
}

// subset picks each element of s with probability 1/2, in s's order or
// shuffled.
func subset(r *rand.Rand, s []int32) []int32 {
	out := []int32{}
	for _, v := range s {
		if r.IntN(2) == 0 {
			out = append(out, v)
		}
	}
	if r.IntN(3) == 0 {
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

func randomChangeCase(r *rand.Rand) *changeCase {
	c := &changeCase{lkl: r.IntN(8) > 0}
	c.ctx.MetadataVersion = metadata.Level(int(metadata.MinLevel) + r.IntN(int(metadata.LatestLevel-metadata.MinLevel)+1))
	if r.IntN(3) == 0 {
		c.ctx.MetadataVersion = metadata.LatestProductionLevel
	}
	elrCapable := c.ctx.MetadataVersion.Has(metadata.GateElr)
	c.ctx.ELR = elrCapable && r.IntN(4) > 0
	c.ctx.MinISR = 1 + r.IntN(3)
	c.ctx.TopicID = uuid.UUID{0: byte(r.IntN(256)), 15: byte(1 + r.IntN(255))}
	c.ctx.PartitionID = int32(r.IntN(100))

	// Broker ids: small ones, ones that share HashSet buckets, big ones.
	pool := []int32{0, 1, 2, 3, 4, 5, 16, 17, 18, 32, 33, 48, 1000, 1016, 65536, 65537}
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	n := 1 + r.IntN(6)
	p := &c.p
	p.Replicas = slices.Clone(pool[:n])
	others := pool[n:]
	p.ISR = subset(r, p.Replicas)
	if elrCapable && r.IntN(2) == 0 {
		var rest []int32
		for _, x := range p.Replicas {
			if !slices.Contains(p.ISR, x) {
				rest = append(rest, x)
			}
		}
		p.ELR = subset(r, rest)
		switch r.IntN(4) {
		case 0:
			p.LastKnownELR = subset(r, p.Replicas)
		case 1:
			p.LastKnownELR = []int32{p.Replicas[r.IntN(n)]}
		}
	}
	switch k := r.IntN(5); {
	case k < 3 && len(p.ISR) > 0:
		p.Leader = p.ISR[r.IntN(len(p.ISR))]
	case k == 3:
		p.Leader = p.Replicas[r.IntN(n)]
	default:
		p.Leader = partitionchange.NoLeader
	}
	p.LeaderRecoveryState = int8(r.IntN(4) / 3)
	p.LeaderEpoch, p.PartitionEpoch = int32(r.IntN(50)), int32(r.IntN(50))
	if r.IntN(5) == 0 && n > 1 { // a reassignment in flight
		k := 1 + r.IntN(n-1)
		p.Removing = subset(r, p.Replicas[:k])
		p.Adding = subset(r, p.Replicas[k:])
	}
	dirChoices := []uuid.UUID{{}, {15: 1}, {15: 2}, {0: 7, 15: 9}, {0: 8, 15: 9}}
	if c.ctx.MetadataVersion.Has(metadata.GateDirectoryAssignment) && r.IntN(2) == 0 {
		p.Directories = make([]uuid.UUID, n)
		for i := range p.Directories {
			p.Directories[i] = dirChoices[r.IntN(len(dirChoices))]
		}
	}

	everyone := append(slices.Clone(p.Replicas), others[:r.IntN(len(others)+1)]...)
	c.accept = subset(r, everyone)
	if r.IntN(30) > 0 {
		c.defaults = map[int32]uuid.UUID{}
		for _, b := range subset(r, everyone) {
			c.defaults[b] = dirChoices[r.IntN(len(dirChoices))]
		}
	}

	// The change.
	if r.IntN(4) > 0 {
		c.setISR = true
		switch r.IntN(4) {
		case 0: // a broker leaves, as fencing or shutdown does
			if len(p.ISR) > 0 {
				gone := p.ISR[r.IntN(len(p.ISR))]
				c.tisr = slices.DeleteFunc(slices.Clone(p.ISR), func(x int32) bool { return x == gone })
				c.accept = slices.DeleteFunc(c.accept, func(x int32) bool { return x == gone })
				if c.ctx.ELR && r.IntN(3) == 0 {
					c.unclean = []int32{gone}
				}
			}
		case 1: // expansion
			c.tisr = append(slices.Clone(p.ISR), subset(r, p.Replicas)...)
			c.tisr = slices.Compact(c.tisr)
		default:
			c.tisr = subset(r, p.Replicas)
		}
	}
	if r.IntN(5) == 0 {
		c.setReplicas = true
		c.treplicas = subset(r, everyone)
		if len(c.treplicas) == 0 {
			c.treplicas = []int32{everyone[0]}
		}
		if r.IntN(3) == 0 {
			c.setRemoving, c.setAdding = true, true
			c.tremoving = subset(r, c.treplicas)
			c.tadding = subset(r, c.treplicas)
		}
	}
	if r.IntN(8) == 0 {
		c.setLRS, c.tlrs = true, int8(r.IntN(2))
	}
	if c.unclean == nil && r.IntN(8) == 0 {
		c.unclean = subset(r, p.Replicas)
	}
	c.election = partitionchange.Election(r.IntN(3))
	if r.IntN(6) == 0 {
		c.setdirs = append(c.setdirs, [2]string{strconv.Itoa(int(everyone[r.IntN(len(everyone))])),
			dirChoices[r.IntN(len(dirChoices))].String()})
	}
	return c
}

// Kafka 4.4.0's PartitionChangeBuilder is the judge: on random partitions
// (replicas, ISR, ELR and last-known ELR, leaders in and out of the ISR or
// none, reassignments in flight, directories) across every metadata.version
// with ELR on and off, and random changes (ISR shrinks and expansions,
// replica changes, reassignments, unclean-shutdown replicas, directory
// moves, recovery states, preferred, online and unclean elections, the
// last-known leader off), kraftd builds the same PartitionChangeRecord byte
// for byte at the same version, or none when Kafka builds none.
func TestPartitionChangeAgainstKafka(t *testing.T) { compareChanges(t, 20000) }

func compareChanges(t *testing.T, n int) {
	r := rand.New(rand.NewPCG(corpusSeed(t), 3))
	var cases []*changeCase
	for range n {
		cases = append(cases, randomChangeCase(r))
	}
	cmds := make([]string, len(cases))
	for i, c := range cases {
		cmds[i] = c.command()
	}
	kinds := map[string]int{}
	for i, line := range kafkaReplication(t, cmds) {
		want := cases[i].answer(t)
		got := line
		if strings.HasPrefix(line, "OK ") {
			f := strings.SplitN(line, " ", 4)
			got = strings.Join(f[:3], " ")
		}
		if got != want {
			t.Fatalf("case %d: %s\nkafka:  %s\nkraftd: %s", i, cmds[i], line, want)
		}
		kinds[strings.SplitN(line, " ", 2)[0]]++
	}
	t.Logf("%d cases agree: %v", len(cases), kinds)
}

// merge applies a PartitionChangeRecord as Kafka's PartitionRegistration.merge
// does, for chains of changes.
func merge(p partitionchange.Partition, rec *metadata.PartitionChangeRecord) partitionchange.Partition {
	set := func(dst *[]int32, src []int32) {
		if src != nil {
			*dst = slices.Clone(src)
		}
	}
	set(&p.Replicas, rec.Replicas)
	set(&p.ISR, rec.Isr)
	set(&p.Removing, rec.RemovingReplicas)
	set(&p.Adding, rec.AddingReplicas)
	set(&p.ELR, rec.EligibleLeaderReplicas)
	set(&p.LastKnownELR, rec.LastKnownElr)
	if rec.Leader != partitionchange.NoLeaderChange {
		p.Leader = rec.Leader
		p.LeaderEpoch++
	}
	if rec.LeaderRecoveryState != -1 {
		p.LeaderRecoveryState = rec.LeaderRecoveryState
	}
	switch {
	case rec.Directories != nil:
		p.Directories = make([]uuid.UUID, len(rec.Directories))
		for i, d := range rec.Directories {
			p.Directories[i] = d
		}
	case len(p.Directories) != len(p.Replicas):
		p.Directories = nil
	}
	p.PartitionEpoch++
	return p
}

// chainStep is one event of a partition's life the way the controller meets
// it: the builder's inputs for a broker fenced, unfenced, shut down, back
// after an unclean shutdown, an ISR expansion from AlterPartition, a
// preferred election, a reassignment started.
func chainStep(r *rand.Rand, p partitionchange.Partition, active map[int32]bool, mv metadata.Level, elr, unclean bool, minISR int) *changeCase {
	c := &changeCase{p: p, lkl: true}
	c.ctx.MetadataVersion, c.ctx.ELR, c.ctx.MinISR = mv, elr, minISR
	c.ctx.TopicID, c.ctx.PartitionID = uuid.UUID{0: 9, 15: 9}, 0
	c.defaults = map[int32]uuid.UUID{}
	if unclean {
		c.election = partitionchange.Unclean
	}
	accept := func(ok func(int32) bool) {
		c.accept = nil
		for b := int32(0); b < 8; b++ {
			if ok(b) {
				c.accept = append(c.accept, b)
			}
		}
	}
	without := func(s []int32, b int32) []int32 {
		return slices.DeleteFunc(slices.Clone(s), func(x int32) bool { return x == b })
	}
	b := p.Replicas[r.IntN(len(p.Replicas))]
	switch r.IntN(7) {
	case 0, 1: // fenced or shut down: out of the ISR, may not lead
		active[b] = false
		accept(func(x int32) bool { return x != b && active[x] })
		c.setISR, c.tisr = true, without(p.ISR, b)
	case 2: // unfenced: may lead even before the cluster shows it
		accept(func(x int32) bool { return x == b || active[x] })
		active[b] = true
	case 3: // back after an unclean shutdown (with ELR): leaves ISR and ELR
		active[b] = true
		accept(func(x int32) bool { return x != b && active[x] })
		c.setISR, c.tisr = true, without(p.ISR, b)
		if elr {
			c.unclean = []int32{b}
		}
	case 4: // AlterPartition: an active replica joins the ISR
		accept(func(x int32) bool { return active[x] })
		c.setISR, c.tisr = true, slices.Clone(p.ISR)
		if active[b] && !slices.Contains(p.ISR, b) {
			c.tisr = append(c.tisr, b)
		}
		if p.LeaderRecoveryState == partitionchange.Recovering && r.IntN(2) == 0 {
			c.setLRS, c.tlrs = true, partitionchange.Recovered
		}
	case 5:
		accept(func(x int32) bool { return active[x] })
		c.election = partitionchange.Preferred
	default: // a reassignment to a new replica set
		accept(func(x int32) bool { return active[x] })
		if len(p.Removing) > 0 || len(p.Adding) > 0 {
			return c
		}
		target := []int32{}
		for _, x := range r.Perm(6) {
			if len(target) < len(p.Replicas) {
				target = append(target, int32(x))
			}
		}
		var removing, adding []int32
		for _, x := range p.Replicas {
			if !slices.Contains(target, x) {
				removing = append(removing, x)
			}
		}
		for _, x := range target {
			if !slices.Contains(p.Replicas, x) {
				adding = append(adding, x)
			}
		}
		c.setReplicas, c.treplicas = true, append(slices.Clone(target), removing...)
		c.setRemoving, c.tremoving = true, orEmpty(removing)
		c.setAdding, c.tadding = true, orEmpty(adding)
	}
	return c
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// Kafka 4.4.0 judges chains of changes: each partition lives through random
// fencing, unfencing, unclean shutdowns, ISR expansions, preferred elections
// and reassignments, each change built from the state the previous record
// left (replayed as Kafka merges it), so the builder meets the states a
// cluster reaches: leaderless partitions, ELRs, last-known leaders,
// recovering leaders, reassignments in flight.
func TestPartitionChangeChainsAgainstKafka(t *testing.T) { compareChains(t, 1500) }

func compareChains(t *testing.T, n int) {
	r := rand.New(rand.NewPCG(corpusSeed(t), 4))
	var cases []*changeCase
	for range n {
		mv := []metadata.Level{11, 16, 22, metadata.LatestProductionLevel}[r.IntN(4)]
		elr := mv.Has(metadata.GateElr) && r.IntN(4) > 0
		unclean := r.IntN(4) == 0
		rf := 1 + r.IntN(4)
		minISR := min(1+r.IntN(3), rf)
		replicas := []int32{}
		for _, x := range r.Perm(6)[:rf] {
			replicas = append(replicas, int32(x))
		}
		p := partitionchange.Partition{Replicas: replicas, ISR: slices.Clone(replicas), Leader: replicas[0]}
		active := map[int32]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true}
		for range 12 {
			c := chainStep(r, p, active, mv, elr, unclean, minISR)
			cases = append(cases, c)
			ans := c.answer(t)
			if !strings.HasPrefix(ans, "OK ") {
				continue
			}
			f := strings.Fields(ans)
			version, _ := strconv.Atoi(f[1])
			value, _ := hex.DecodeString(f[2])
			rec, v, err := metadata.Decode(value)
			if err != nil || int(v) != version {
				t.Fatalf("decoding kraftd's record: %v", err)
			}
			p = merge(p, rec.(*metadata.PartitionChangeRecord))
		}
	}
	cmds := make([]string, len(cases))
	for i, c := range cases {
		cmds[i] = c.command()
	}
	kinds := map[string]int{}
	for i, line := range kafkaReplication(t, cmds) {
		want := cases[i].answer(t)
		got := line
		if strings.HasPrefix(line, "OK ") {
			got = strings.Join(strings.SplitN(line, " ", 4)[:3], " ")
		}
		if got != want {
			t.Fatalf("step %d: %s\nkafka:  %s\nkraftd: %s", i, cmds[i], line, want)
		}
		kinds[strings.SplitN(line, " ", 2)[0]]++
	}
	states := map[string]int{}
	for _, c := range cases {
		if c.p.Leader == partitionchange.NoLeader {
			states["leaderless"]++
		}
		if len(c.p.ELR) > 0 {
			states["with ELR"]++
		}
		if len(c.p.LastKnownELR) == 1 {
			states["with a last-known leader"]++
		}
		if c.p.LeaderRecoveryState == partitionchange.Recovering {
			states["recovering"]++
		}
		if len(c.p.Adding)+len(c.p.Removing) > 0 {
			states["reassigning"]++
		}
	}
	t.Logf("%d steps agree: %v; steps from states %v", len(cases), kinds, states)
}

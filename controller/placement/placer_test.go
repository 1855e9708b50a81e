package placement

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
)

// zeroRandom draws 0 every time: every rotation starts at its beginning.
type zeroRandom struct{}

func (zeroRandom) NextInt(int32) int32 { return 0 }

func str(s string) *string { return &s }

func brokersOf(racks map[string][]int32, fenced ...int32) []Broker {
	var out []Broker
	names := make([]string, 0, len(racks))
	for name := range racks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, id := range racks[name] {
			b := Broker{ID: id, Fenced: slices.Contains(fenced, id)}
			if name != "" {
				b.Rack = str(name)
			}
			out = append(out, b)
		}
	}
	return out
}

// The striping Kafka's placer documents: racks A, B, C of three brokers each,
// all offsets 0: partition 1 A0 B0 C0, partition 2 B1 C1 A1, partition 3
// C2 A2 B2.
func TestStripedPattern(t *testing.T) {
	brokers := brokersOf(map[string][]int32{"A": {10, 11, 12}, "B": {20, 21, 22}, "C": {30, 31, 32}})
	got, err := Place(Spec{NumPartitions: 3, NumReplicas: 3}, brokers, zeroRandom{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{10, 20, 30}, {21, 31, 11}, {32, 12, 22}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A fenced broker is never a leader and takes a replica only when its rack
// has no unfenced broker left for the partition.
func TestAvoidsFencedBrokers(t *testing.T) {
	brokers := brokersOf(map[string][]int32{"": {0, 1, 2, 3}}, 3)
	got, err := Place(Spec{NumPartitions: 8, NumReplicas: 3}, brokers, NewJavaRandom(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if slices.Contains(p, 3) {
			t.Fatalf("fenced broker 3 placed in %v with three unfenced brokers", p)
		}
	}
	// With replication factor 4 broker 3 is needed, but never leads.
	got, err = Place(Spec{NumPartitions: 8, NumReplicas: 4}, brokers, NewJavaRandom(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if p[0] == 3 || !slices.Contains(p, 3) {
			t.Fatalf("partition %v: broker 3 must follow", p)
		}
	}
}

// One unfenced broker takes every leader, and placing many partitions on it
// terminates (Kafka does not reshuffle for a single unfenced broker).
func TestSingleUnfencedBroker(t *testing.T) {
	brokers := brokersOf(map[string][]int32{"": {1, 2, 3}}, 2, 3)
	got, err := Place(Spec{NumPartitions: 10, NumReplicas: 3}, brokers, NewJavaRandom(7))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if p[0] != 1 || len(p) != 3 {
			t.Fatalf("partition %v", p)
		}
	}
}

func TestPlacementErrors(t *testing.T) {
	three := brokersOf(map[string][]int32{"a": {1}, "b": {2}, "c": {3}})
	cases := []struct {
		name    string
		brokers []Broker
		rf      int16
		msg     string
	}{
		{"zero rf", three, 0, "Invalid replication factor 0: the replication factor must be positive."},
		{"negative rf", three, -1, "Invalid replication factor -1: the replication factor must be positive."},
		{"too few", three, 4, "The target replication factor of 4 cannot be reached because only 3 broker(s) " +
			"are registered or some brokers have all their log directories cordoned."},
		{"all fenced", brokersOf(map[string][]int32{"a": {1, 2}}, 1, 2), 1,
			"All brokers are currently fenced, or have all their log directories cordoned."},
		// Kafka checks the fenced brokers before the count.
		{"all fenced and too few", brokersOf(map[string][]int32{"a": {1}}, 1), 3,
			"All brokers are currently fenced, or have all their log directories cordoned."},
		{"no brokers", nil, 1, "All brokers are currently fenced, or have all their log directories cordoned."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Place(Spec{NumPartitions: 1, NumReplicas: c.rf}, c.brokers, NewJavaRandom(1))
			var pe *Error
			if !errors.As(err, &pe) || pe.Message != c.msg || !errors.Is(err, kerr.InvalidReplicationFactor) {
				t.Fatalf("got %v, want INVALID_REPLICATION_FACTOR %q", err, c.msg)
			}
			if got, want := CreateTopicsMessage(c.rf, pe), "Unable to replicate the partition "; got[:len(want)] != want {
				t.Fatalf("CreateTopicsMessage: %q", got)
			}
		})
	}
}

// Properties over random clusters: replicas are distinct registered brokers,
// the leader is unfenced, each partition spans min(rf, racks) racks, and a
// fenced broker is used only when its rack's unfenced ones are all in the
// partition.
func TestPlacementProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		numRacks := 1 + r.IntN(5)
		var brokers []Broker
		rackOf := map[int32]string{}
		for id := range int32(1 + r.IntN(20)) {
			rack := string(rune('a' + r.IntN(numRacks)))
			brokers = append(brokers, Broker{ID: id, Rack: str(rack), Fenced: r.IntN(4) == 0})
			rackOf[id] = rack
		}
		racks := map[string]bool{}
		for _, b := range brokers {
			racks[*b.Rack] = true
		}
		rf := int16(1 + r.IntN(len(brokers)))
		got, err := Place(Spec{NumPartitions: int32(1 + r.IntN(30)), NumReplicas: rf}, brokers, NewJavaRandom(r.Int64()))
		if err != nil {
			if !slices.ContainsFunc(brokers, func(b Broker) bool { return !b.Fenced }) {
				continue
			}
			t.Fatal(err)
		}
		unfenced := 0
		for _, b := range brokers {
			if !b.Fenced {
				unfenced++
			}
		}
		for pi, p := range got {
			seen := map[int32]bool{}
			spanned := map[string]bool{}
			for i, id := range p {
				b := brokers[slices.IndexFunc(brokers, func(b Broker) bool { return b.ID == id })]
				if seen[id] {
					t.Fatalf("%v: %d twice", p, id)
				}
				seen[id] = true
				spanned[rackOf[id]] = true
				if i == 0 && b.Fenced {
					t.Fatalf("%v: fenced leader", p)
				}
			}
			if len(p) != int(rf) || len(spanned) != min(int(rf), len(racks)) {
				t.Fatalf("%v spans %d racks of %d at rf %d", p, len(spanned), len(racks), rf)
			}
			// Until the first reshuffle: a reshuffle restarts the epochs,
			// and a list last used in the epoch it restarts at looks
			// exhausted for one partition (Kafka's behaviour too).
			for _, b := range brokers {
				if pi >= unfenced || !b.Fenced || !seen[b.ID] {
					continue
				}
				for _, o := range brokers {
					if !o.Fenced && *o.Rack == *b.Rack && !seen[o.ID] {
						t.Fatalf("%v: fenced %d placed before unfenced %d of rack %s", p, b.ID, o.ID, *b.Rack)
					}
				}
			}
		}
	}
}

// kafkaMockRandom is the MockRandom of Kafka's placer tests: a 64-bit LCG
// under java.util.Random's nextInt, so Kafka's expected placements apply.
type kafkaMockRandom struct{ state int64 }

func newKafkaMockRandom() *kafkaMockRandom { return &kafkaMockRandom{state: 17} }

func (m *kafkaMockRandom) NextInt(bound int32) int32 {
	return nextInt(func(bits uint) int32 {
		m.state = m.state*2862933555777941757 + 3037000493
		return int32(uint64(m.state) >> (64 - bits))
	}, bound)
}

func noRack(ids ...int32) []Broker {
	var out []Broker
	for _, id := range ids {
		out = append(out, Broker{ID: id})
	}
	return out
}

// The placements Kafka's own tests expect with their MockRandom.
func TestKafkaPlacements(t *testing.T) {
	fenced := func(bs []Broker, ids ...int32) []Broker {
		for i := range bs {
			bs[i].Fenced = slices.Contains(ids, bs[i].ID)
		}
		return bs
	}
	racked := func(spec ...any) []Broker {
		var out []Broker
		for i := 0; i < len(spec); i += 3 {
			out = append(out, Broker{ID: int32(spec[i].(int)), Rack: str(spec[i+1].(string)), Fenced: spec[i+2].(bool)})
		}
		return out
	}
	cases := []struct {
		name    string
		brokers []Broker
		n       int32
		rf      int16
		want    [][]int32
	}{
		{"fenced avoided on one rack", fenced(noRack(3, 1, 0, 4, 2), 1), 5, 4,
			[][]int32{{3, 4, 0, 2}, {4, 0, 2, 3}, {0, 2, 3, 4}, {2, 3, 4, 0}, {0, 4, 3, 2}}},
		{"fenced used when needed", fenced(noRack(3, 1, 2), 1), 4, 3,
			[][]int32{{3, 2, 1}, {2, 3, 1}, {3, 2, 1}, {2, 3, 1}}},
		{"one unfenced broker", fenced(noRack(0, 1), 1), 3, 1, [][]int32{{0}, {0}, {0}}},
		{"several racks", racked(11, "1", false, 10, "1", false, 30, "3", false, 31, "3", false,
			21, "2", false, 20, "2", true), 3, 4,
			[][]int32{{11, 21, 31, 10}, {21, 30, 10, 20}, {31, 11, 21, 30}}},
		{"racks with only fenced brokers", racked(11, "1", false, 10, "1", false, 30, "3", true, 31, "3", true,
			20, "2", true, 21, "2", true, 41, "4", false, 40, "4", true), 3, 4,
			[][]int32{{41, 11, 21, 30}, {10, 20, 31, 41}, {41, 21, 30, 11}}},
		{"successful placement", noRack(0, 3, 2, 1), 5, 3,
			[][]int32{{2, 3, 0}, {3, 0, 1}, {0, 1, 2}, {1, 2, 3}, {1, 0, 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Place(Spec{NumPartitions: c.n, NumReplicas: c.rf}, c.brokers, newKafkaMockRandom())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// Kafka's even-distribution expectation: 200 partitions at rf 2 on four
// brokers, counted by replica list.
func TestEvenDistribution(t *testing.T) {
	got, err := Place(Spec{NumPartitions: 200, NumReplicas: 2}, noRack(0, 1, 2, 3), newKafkaMockRandom())
	if err != nil {
		t.Fatal(err)
	}
	counts := map[[2]int32]int{}
	for _, p := range got {
		counts[[2]int32{p[0], p[1]}]++
	}
	want := map[[2]int32]int{{0, 1}: 14, {0, 2}: 22, {0, 3}: 14, {1, 0}: 17, {1, 2}: 17, {1, 3}: 16,
		{2, 0}: 13, {2, 1}: 17, {2, 3}: 20, {3, 0}: 20, {3, 1}: 19, {3, 2}: 11}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%v: %d partitions, want %d", k, counts[k], n)
		}
	}
}

// java.util.Random's first draws for known seeds (from a JVM).
func TestJavaRandom(t *testing.T) {
	r := NewJavaRandom(42)
	var got []int32
	for _, b := range []int32{10, 7, 3, 16, 100, 1} {
		got = append(got, r.NextInt(b))
	}
	if want := []int32{0, 5, 0, 0, 70, 0}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDefaultDir(t *testing.T) {
	d1, d2 := uuid.UUID{1: 1}, uuid.UUID{1: 2}
	cases := []struct {
		b    *image.Broker
		want uuid.UUID
	}{
		{nil, DirUnassigned},
		{&image.Broker{}, DirMigrating},
		{&image.Broker{LogDirs: []uuid.UUID{d1}}, d1},
		{&image.Broker{LogDirs: []uuid.UUID{d1, d2}}, DirUnassigned},
	}
	for _, c := range cases {
		if got := DefaultDir(c.b); got != c.want {
			t.Errorf("%+v: %v, want %v", c.b, got, c.want)
		}
	}
	if !HasUncordonedDir(&image.Broker{}) || !HasUncordonedDir(&image.Broker{LogDirs: []uuid.UUID{d1}}) ||
		!HasUncordonedDir(&image.Broker{LogDirs: []uuid.UUID{d1, d2}, CordonedLogDirs: []uuid.UUID{d1}}) ||
		HasUncordonedDir(&image.Broker{LogDirs: []uuid.UUID{d1, d2}, CordonedLogDirs: []uuid.UUID{d2, d1}}) {
		t.Fatal("HasUncordonedDir")
	}
}

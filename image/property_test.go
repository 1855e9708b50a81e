package image

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// view is the builder's state as an image, without ending its generation:
// for reading between two records only (the builder changes its nodes in
// place afterwards).
func (b *Builder) view() *Image { return &Image{st: b.st} }

// TestBuilderEqualsScratch: a builder that handed out images along the way
// ends where replaying the same records from scratch ends, and every image
// it handed out still equals the replay of the records before it: the
// copy-on-write never lets a later record reach an earlier image.
func TestBuilderEqualsScratch(t *testing.T) {
	for seed := range uint64(6) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 7))}
		b := NewBuilder(Empty(), Options{})
		accepted := g.start()
		replayAll(t, b, accepted...)
		type checkpoint struct {
			im *Image
			n  int
		}
		var kept []checkpoint
		refused := 0
		for step := range 3000 {
			rec := g.record(b.view())
			if err := replayOne(b, rec); err != nil {
				var re *ReplayError
				if !errors.As(err, &re) {
					t.Fatalf("seed %d: error %T %v", seed, err, err)
				}
				refused++
				continue
			}
			accepted = append(accepted, rec)
			if step%(50+int(seed)*20) == 0 {
				kept = append(kept, checkpoint{b.Image(), len(accepted)})
			}
		}
		kept = append(kept, checkpoint{b.Image(), len(accepted)})
		c := kept[len(kept)-1].im.Counts()
		t.Logf("seed %d: %d records replayed, %d refused; %d brokers, %d topics, %d partitions, %d offline",
			seed, len(accepted), refused, c.ActiveBrokers+c.FencedBrokers, c.Topics, c.Partitions, c.OfflinePartitions)
		if refused == 0 || refused > len(accepted) {
			t.Fatalf("seed %d: %d records refused, %d replayed: the generator is off", seed, refused, len(accepted))
		}
		for _, c := range kept {
			want := build(t, accepted[:c.n]...)
			if d := Diff(c.im, want, 5); d != nil || c.im.Provenance() != want.Provenance() {
				t.Fatalf("seed %d: the image after %d records differs from their replay (%+v, %+v):\n%s",
					seed, c.n, c.im.Provenance(), want.Provenance(), strings.Join(d, "\n"))
			}
			checkIndexes(t, c.im)
		}
	}
}

// TestSnapshotRoundTrip: at any point of a random history, the image written
// as a snapshot and loaded back is the same image.
func TestSnapshotRoundTrip(t *testing.T) {
	for seed := range uint64(6) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 11)), safe: true}
		b := NewBuilder(Empty(), Options{})
		replayAll(t, b, g.start()...)
		for step := range 2000 {
			_ = replayOne(b, g.record(b.view()))
			if step%250 != 249 {
				continue
			}
			im := b.Image()
			loaded := loadValues(t, snapshotValues(t, im), im.Provenance().Offset)
			if d := Diff(im, loaded, 5); d != nil {
				t.Fatalf("seed %d step %d: the loaded snapshot differs:\n%s", seed, step, strings.Join(d, "\n"))
			}
			checkIndexes(t, loaded)
		}
	}
}

// byteSource feeds the generator from fuzz input, and from a fixed sequence
// once that runs out (a constant would stall rand's rejection sampling).
type byteSource struct {
	b    []byte
	tail rand.PCG
}

func (s *byteSource) Uint64() uint64 {
	if len(s.b) == 0 {
		return s.tail.Uint64()
	}
	var v uint64
	for i := 0; i < 8 && len(s.b) > 0; i++ {
		v = v<<8 | uint64(s.b[0])
		s.b = s.b[1:]
	}
	return v
}

// FuzzReplay: random record sequences never panic; a refused record is a
// *ReplayError and leaves the builder exactly as it was; the indexes stay
// true to the content; and the final image, when its metadata.version can
// carry it, writes a snapshot that loads back into the same image.
func FuzzReplay(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		seed := make([]byte, 64+r.IntN(512))
		for i := range seed {
			seed[i] = byte(r.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &byteSource{b: data}
		g := &gen{r: rand.New(src)}
		b := NewBuilder(Empty(), Options{})
		for _, rec := range g.start() {
			_ = replayOne(b, rec)
		}
		for step := 0; step < 300 && len(src.b) > 0; step++ {
			before := b.Image()
			rec := g.record(before)
			if err := replayOne(b, rec); err != nil {
				var re *ReplayError
				if !errors.As(err, &re) {
					t.Fatalf("error %T %v", err, err)
				}
				if d := Diff(before, b.view(), 3); d != nil || b.Provenance() != before.Provenance() {
					t.Fatalf("a refused %s changed the builder: %v", rec.TypeName(), d)
				}
			}
		}
		im := b.Image()
		checkIndexes(t, im)
		var vals [][]byte
		err := im.Write(func(rec metadata.Record, version int16) error {
			v, err := metadata.Append(nil, rec, version)
			vals = append(vals, v)
			return err
		})
		if err != nil {
			return // a loss Kafka would refuse to write too, or no metadata.version
		}
		loaded := loadValues(t, vals, im.Provenance().Offset)
		dropsELR := false
		for tp := range im.Topics() {
			for _, p := range tp.Partitions() {
				dropsELR = dropsELR || len(p.ELR())+len(p.LastKnownELR()) > 0
			}
		}
		mv, _ := im.MetadataVersion()
		dropsScram := !mv.Has(metadata.GateScram) && len(collect(im.ScramCredentials())) > 0
		// Kafka writes no producer-id block below 0.
		dropsPID := im.NextProducerID() < -1
		if d := Diff(im, loaded, 3); d != nil && !(dropsELR && !im.ELREnabled()) && !dropsScram && !dropsPID {
			t.Fatalf("the loaded snapshot differs: %v", d)
		}
	})
}

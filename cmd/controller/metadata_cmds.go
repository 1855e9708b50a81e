package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

// metadataViews are the metadata command's views, in the order usage lists them.
var metadataViews = []struct{ name, what string }{
	{"summary", "offset, metadata.version and counts"},
	{"brokers", "broker registrations"},
	{"controllers", "controller registrations"},
	{"topics", "topics with their ids and partition counts"},
	{"partitions", "partitions: leader, epochs, replicas, ISR, ELR, directories (--topic NAME for one topic)"},
	{"configs", "configuration by resource"},
	{"features", "metadata.version and the finalized features"},
	{"producer-ids", "the next producer id block"},
	{"quotas", "client quotas by entity"},
	{"scram", "SCRAM users and mechanisms (never salts or keys)"},
	{"acls", "access control entries"},
	{"records", "the image as the records a snapshot at its offset holds (as --records)"},
}

// metadataFlags are the metadata command's flags.
type metadataFlags struct {
	dir, snapshot, topic string
	offset               int64
	json, records        bool
	secrets, memory      bool
}

func (f *metadataFlags) register(fsName string, stderr io.Writer) *pflag.FlagSet {
	fs := newFlagSet(fsName, stderr)
	fs.StringVar(&f.dir, "dir", "", "metadata log dir: metadata.log.dir, or its __cluster_metadata-0 partition dir (latest snapshot + segments)")
	fs.StringVar(&f.snapshot, "snapshot", "", "a snapshot file (<offset>-<epoch>.checkpoint) instead of a log dir")
	fs.Int64Var(&f.offset, "offset", -1, "with --dir: the image after the last batch ending at or before this offset (a snapshot file named X holds the image at X-1)")
	fs.BoolVar(&f.json, "json", false, "print JSON (stable field names) instead of text")
	fs.BoolVar(&f.records, "records", false, "print the image as the records a snapshot holds (as the records view)")
	fs.StringVar(&f.topic, "topic", "", "with partitions: only this topic")
	fs.BoolVar(&f.secrets, "show-secrets", false, "with --records: print SCRAM salts and keys (otherwise zeroed)")
	fs.BoolVar(&f.memory, "memory", false, "print to stderr the time the load took, the live heap after GC and the process RSS with the image loaded")
	return fs
}

// runMetadata reads a metadata log dir or snapshot into an image, as a
// standby controller would, and prints one view of it (in the spirit of
// kafka-metadata-shell).
func runMetadata(args []string, stdout, stderr io.Writer) error {
	var f metadataFlags
	fs := f.register("metadata", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: controller metadata <view> (--dir DIR [--offset N] | --snapshot FILE) [--json]\n\nviews:")
		for _, v := range metadataViews {
			fmt.Fprintf(stderr, "  %-14s %s\n", v.name, v.what)
		}
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	view := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		view, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.records {
		if view != "" && view != "records" {
			return fmt.Errorf("--records prints the records view, not %q", view)
		}
		view = "records"
	}
	if view == "" {
		fs.Usage()
		return exitError{2}
	}
	if !slices.ContainsFunc(metadataViews, func(v struct{ name, what string }) bool { return v.name == view }) {
		return fmt.Errorf("unknown view %q (run 'controller metadata --help')", view)
	}
	if f.topic != "" && view != "partitions" {
		return errors.New("--topic goes with the partitions view")
	}
	if f.secrets && view != "records" {
		return errors.New("--show-secrets goes with --records")
	}
	// The node's runtime defaults suit its few MB of live heap, not an
	// image of a million partitions: under the soft limit the collector
	// would run all the time (a load six times slower), and GOGC 400 lets
	// the heap grow to five times the image. Go's own defaults instead.
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		limiter.stop()
		debug.SetMemoryLimit(math.MaxInt64)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(100)
	}
	start := time.Now()
	im, err := loadMetadata(f.dir, f.snapshot, f.offset)
	if err != nil {
		return err
	}
	if f.memory {
		printMemory(stderr, im, time.Since(start))
	}
	if view == "records" {
		return printRecords(stdout, im, f.json, f.secrets)
	}
	return printView(stdout, im, view, f.json, f.topic)
}

// loadMetadata builds the image of a dir (as of offset when not negative)
// or of one snapshot file.
func loadMetadata(dir, snapshot string, offset int64) (*image.Image, error) {
	switch {
	case dir != "" && snapshot != "":
		return nil, errors.New("--dir and --snapshot: pick one")
	case snapshot != "":
		if offset >= 0 {
			return nil, errors.New("--offset goes with --dir: a snapshot holds one offset")
		}
		return loadSnapshotFile(snapshot)
	case dir != "":
		return loadLogDir(dir, offset)
	}
	return nil, errors.New("--dir DIR or --snapshot FILE is required")
}

// partitionDir accepts metadata.log.dir (holding __cluster_metadata-0) or
// the partition dir itself.
func partitionDir(dir string) (string, error) {
	pd := topics.PartitionDir(dir, topics.ClusterMetadata)
	if st, err := os.Stat(pd); err == nil && st.IsDir() {
		return pd, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return dir, nil
}

// stopReplay ends the walk over the log's batches at the requested offset.
var stopReplay = errors.New("stop")

// loadLogDir replays the newest snapshot at or before offset (offset < 0:
// the newest) and then the segments' batches up to the last one ending at
// or before offset. Memory: the image and one batch at a time.
func loadLogDir(dir string, offset int64) (*image.Image, error) {
	pd, err := partitionDir(dir)
	if err != nil {
		return nil, err
	}
	l, err := metadatalog.OpenReadOnly(pd)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if offset < 0 {
		offset = l.EndOffset().Offset
	}
	ld := image.NewLoader(image.Options{})
	from := l.StartOffset()
	var snap raft.OffsetAndEpoch
	found := false
	for _, s := range l.Snapshots() {
		if s.Offset > 0 && s.Offset-1 <= offset && (!found || s.Offset > snap.Offset) {
			snap, found = s, true
		}
	}
	if found {
		if err := loadSnapshotInto(ld, snap, l.SnapshotPath(snap)); err != nil {
			return nil, err
		}
		from = snap.Offset
	} else if from > 0 {
		return nil, fmt.Errorf("%s: the log starts at offset %d and no snapshot ends at or before offset %d", pd, from, offset)
	}
	bases := l.SegmentBases()
	var values [][]byte
	err = l.Batches(from, func(batch []byte) error {
		h, err := protocol.ParseBatchHeader(batch)
		if err != nil {
			return batchError(pd, bases, -1, err)
		}
		if h.LastOffset() > offset {
			return stopReplay
		}
		if h.LastOffset() < from {
			return nil
		}
		cb := raft.CommittedBatch{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), Epoch: h.PartitionLeaderEpoch, Control: h.IsControl()}
		_, values, _, err = protocol.DecodeValues(batch, values[:0])
		if err != nil {
			return batchError(pd, bases, h.BaseOffset, err)
		}
		cb.Records = values
		if skip := from - h.BaseOffset; skip > 0 { // a snapshot ending inside the batch
			if cb.Control || skip > int64(len(values)) {
				return nil
			}
			cb.BaseOffset, cb.Records = from, values[skip:]
		}
		if err := ld.HandleCommit(cb); err != nil {
			return batchError(pd, bases, h.BaseOffset, err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, stopReplay) {
		return nil, err
	}
	return ld.Image(), nil
}

// batchError names the segment file holding the batch at base.
func batchError(pd string, bases []int64, base int64, err error) error {
	if base < 0 || len(bases) == 0 {
		return fmt.Errorf("%s: %w", pd, err)
	}
	seg := bases[0]
	for _, b := range bases {
		if b <= base {
			seg = b
		}
	}
	return fmt.Errorf("%s: batch at offset %d: %w", filepath.Join(pd, fmt.Sprintf("%020d.log", seg)), base, err)
}

// snapshotID reads a snapshot's id from its name: Kafka's
// <offset 20>-<epoch 10>.checkpoint, or bootstrap.checkpoint (0-0).
func snapshotID(path string) (raft.OffsetAndEpoch, error) {
	name := filepath.Base(path)
	if name == "bootstrap.checkpoint" {
		return raft.OffsetAndEpoch{}, nil
	}
	var id raft.OffsetAndEpoch
	var rest string
	if n, _ := fmt.Sscanf(name, "%d-%d%s", &id.Offset, &id.Epoch, &rest); n != 3 || rest != ".checkpoint" || id.Offset < 0 || id.Epoch < 0 {
		return id, fmt.Errorf("%s: a snapshot file is named <offset>-<epoch>.checkpoint (its id)", path)
	}
	return id, nil
}

// fileSnapshot is a snapshot file as raft reads one.
type fileSnapshot struct {
	*os.File
	id   raft.OffsetAndEpoch
	size int64
}

func (s *fileSnapshot) ID() raft.OffsetAndEpoch { return s.id }
func (s *fileSnapshot) Size() int64             { return s.size }

func openSnapshotFile(path string, id raft.OffsetAndEpoch) (*fileSnapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileSnapshot{File: f, id: id, size: st.Size()}, nil
}

func loadSnapshotInto(ld *image.Loader, id raft.OffsetAndEpoch, path string) error {
	r, err := openSnapshotFile(path, id)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := ld.LoadSnapshot(id, r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadSnapshotFile builds the image of one snapshot file. The bootstrap
// snapshot (0-0) is not image state for a controller (its records wait for
// activation), so its records are replayed here as activation would.
func loadSnapshotFile(path string) (*image.Image, error) {
	id, err := snapshotID(path)
	if err != nil {
		return nil, err
	}
	ld := image.NewLoader(image.Options{})
	if err := loadSnapshotInto(ld, id, path); err != nil {
		return nil, err
	}
	recs, ok := ld.Bootstrap()
	if !ok {
		return ld.Image(), nil
	}
	b := image.NewBuilder(image.Empty(), image.Options{})
	for _, rec := range recs {
		// Replay reads the fields a record holds, whatever its version.
		_, hi := rec.ValidVersions()
		if err := b.Replay(0, 0, rec, hi); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return b.Image(), nil
}

// printRecords prints Image.Write's records: text, one "Type vN {json}" a
// line, or a JSON object whose records hold type, apiKey, version, the
// record's value in hex (Kafka's framing, as a snapshot holds it) and its
// data in Kafka's JSON form. SCRAM salts and keys are zeroed unless secrets.
func printRecords(w io.Writer, im *image.Image, asJSON, secrets bool) error {
	bw := bufio.NewWriter(w)
	prov := im.Provenance()
	if asJSON {
		fmt.Fprintf(bw, "{\"offset\":%d,\"epoch\":%d,\"records\":[", prov.Offset, prov.Epoch)
	}
	n := 0
	var value []byte
	err := im.Write(func(rec metadata.Record, version int16) error {
		if s, ok := rec.(*metadata.UserScramCredentialRecord); ok && !secrets {
			c := *s
			c.Salt, c.StoredKey, c.ServerKey = zeroed(c.Salt), zeroed(c.StoredKey), zeroed(c.ServerKey)
			rec = &c
		}
		data, err := metareflect.KafkaJSON(rec, version)
		if err != nil {
			return fmt.Errorf("%s v%d: %w", rec.TypeName(), version, err)
		}
		if !asJSON {
			fmt.Fprintf(bw, "%s v%d %s\n", rec.TypeName(), version, data)
			return nil
		}
		if value, err = metadata.Append(value[:0], rec, version); err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		fmt.Fprintf(bw, "\n{\"type\":%q,\"apiKey\":%d,\"version\":%d,\"value\":\"%s\",\"data\":%s}", rec.TypeName(), rec.APIKey(), version, hex.EncodeToString(value), data)
		return nil
	})
	if err != nil {
		return fmt.Errorf("write the image's records: %w", err)
	}
	if asJSON {
		bw.WriteString("\n]}\n")
	}
	return bw.Flush()
}

// printMemory says what holding the image costs this process: the live heap
// after a collection (the image, mostly), the resident set once the freed
// memory went back to the system, and the peak resident set of the load.
func printMemory(w io.Writer, im *image.Image, took time.Duration) {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	c := im.Counts()
	fmt.Fprintf(w, "loaded offset=%d partitions=%d brokers=%d load_seconds=%.2f heap_after_gc_bytes=%d rss_bytes=%d peak_rss_bytes=%d\n",
		im.Provenance().Offset, c.Partitions, c.ActiveBrokers+c.FencedBrokers, took.Seconds(), m.HeapAlloc,
		procStatus("VmRSS:"), procStatus("VmHWM:"))
	runtime.KeepAlive(im)
}

// procStatus is a size field of /proc/self/status in bytes (Linux), -1
// where unknown.
func procStatus(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

func zeroed(b []byte) []byte { return make([]byte, len(b)) }

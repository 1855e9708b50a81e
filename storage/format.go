package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
)

// FormatOptions configures Format.
type FormatOptions struct {
	// Dirs are the log dirs (log.dirs); MetadataDir (metadata.log.dir) is
	// formatted too whether or not it is listed.
	Dirs        []string
	MetadataDir string
	// ClusterID must be a non-reserved uuid in Kafka's text form.
	ClusterID string
	NodeID    int32
	// IgnoreFormatted skips already formatted dirs instead of failing.
	IgnoreFormatted bool
	// MetadataVersion is --release-version; zero = Kafka's default (or the
	// level of a "metadata.version" entry in Features).
	MetadataVersion features.MetadataVersion
	// Features are --feature levels (name -> level), checked and completed
	// with defaults for the metadata.version as Kafka 4.4 does; levels above
	// 0 are written as FeatureLevelRecords (kraft.version never is).
	Features map[string]int16
	// Out receives the progress lines kafka-storage prints (may be nil).
	Out io.Writer
	// Now stamps the bootstrap snapshot's batches and the meta.properties date
	// comment; nil = time.Now.
	Now func() time.Time
	// Broker is set when process.roles lacks controller: such a node gets no
	// bootstrap snapshot.
	Broker bool
	// DynamicQuorum is set when controller.quorum.voters is empty: the
	// cluster runs kraft.version 1 (KIP-853). Kafka's --no-initial-controllers
	// is DynamicQuorum with no InitialControllers.
	DynamicQuorum bool
	// InitialControllers is the first voter set of a dynamic quorum
	// (--initial-controllers, or --standalone: one entry for the node itself
	// with a fresh uuid.RandomDirectoryID). It implies DynamicQuorum; when NodeID
	// is among them, the metadata dir gets that voter's directory id.
	InitialControllers []InitialController
	// ControllerListener names the voters' endpoint in the bootstrap
	// snapshot (the first of controller.listener.names).
	ControllerListener string
	// ScramRecords are UserScramCredentialRecord values (--add-scram,
	// security.ParseAddScram), written after the feature records as Kafka
	// 4.4 does; they need metadata.version 3.5-IV2 or later.
	ScramRecords [][]byte
	// FS is where the dirs live; nil = the OS.
	FS vfs.FS
}

// Format prepares log dirs for a node as Kafka 4.4's `kafka-storage format`
// does. Every dir must be unformatted unless IgnoreFormatted; dirs formatted
// with another cluster id or node id are an error either way. It prints the
// bootstrap records, then formats each new dir: for a controller's metadata
// dir the bootstrap snapshot 0-0 (Kafka 4.4's
// bootstrap: features, and for kraft.version 1 the initial voters), and last
// a version 1 meta.properties with a fresh directory id (or the node's own
// in InitialControllers). Each file is written atomically and durably before
// the next, so a crash mid-format leaves the dir unformatted (Format can run
// again) rather than half formatted.
func Format(o FormatOptions) error {
	w, err := newDirWriter(o)
	if err != nil {
		return err
	}
	dirs := uniqueDirs(append(append([]string(nil), o.Dirs...), o.MetadataDir))
	ens, err := loadEnsemble(w.fsys, dirs)
	if err != nil {
		return fmt.Errorf("storage: format: %w", err)
	}
	if err := ens.verify(o.ClusterID, o.NodeID); err != nil {
		return fmt.Errorf("storage: format: %w", err)
	}
	if len(ens.formatted) > 0 && !o.IgnoreFormatted {
		return fmt.Errorf("storage: format: Log directory %s is already formatted. Use --ignore-formatted to ignore this directory and format the others.", ens.formatted[0])
	}
	if len(ens.empty) == 0 {
		fmt.Fprintln(w.out, "All of the log directories are already formatted.")
		return nil
	}
	fmt.Fprintln(w.out, w.features.describe())
	for _, mp := range ens.props {
		w.seen[mp.DirectoryID] = true
	}
	for _, dir := range dirsInKafkaOrder(ens.empty) {
		if err := w.format(dir); err != nil {
			return err
		}
	}
	return nil
}

// dirWriter formats one unformatted dir after another with what Format
// resolved from its options.
type dirWriter struct {
	o        FormatOptions
	fsys     vfs.FS
	features featureSettings
	now      func() time.Time
	out      io.Writer
	records  [][]byte
	// voterDirID is this node's directory id in a dynamic quorum's initial
	// voter set (zero when it is not a voter there).
	voterDirID uuid.UUID
	// seen holds the directory ids in use, so fresh ones never collide.
	seen map[uuid.UUID]bool
}

// newDirWriter validates o in the order Kafka's Formatter.run does (node,
// cluster, listener, then release version and features) and fills in
// defaults.
func newDirWriter(o FormatOptions) (*dirWriter, error) {
	if o.NodeID < 0 {
		return nil, fmt.Errorf("storage: format: node.id must be >= 0, got %d", o.NodeID)
	}
	if _, err := ParseClusterID(o.ClusterID); err != nil {
		return nil, fmt.Errorf("storage: format: %w", err)
	}
	if o.MetadataDir == "" {
		return nil, errors.New("storage: format: no metadata log dir")
	}
	if o.InitialControllers != nil {
		o.DynamicQuorum = true
	}
	voterDirID, err := voterDirectoryID(o)
	if err != nil {
		return nil, err
	}
	var release *features.MetadataVersion
	if o.MetadataVersion != (features.MetadataVersion{}) {
		release = &o.MetadataVersion
	}
	fs, err := resolveFeatures(release, o.Features, o.DynamicQuorum)
	if err != nil {
		return nil, err
	}
	w := &dirWriter{o: o, fsys: vfs.Or(o.FS), features: fs, now: o.Now, out: o.Out, voterDirID: voterDirID, seen: map[uuid.UUID]bool{}}
	if w.now == nil {
		w.now = time.Now
	}
	if w.out == nil {
		w.out = io.Discard
	}
	if len(o.ScramRecords) > 0 && !metadata.Level(fs.mv.Level).Has(metadata.GateScram) {
		return nil, errors.New("SCRAM is only supported in metadata.version 3.5-IV2 or later.")
	}
	w.records = append(fs.records(), o.ScramRecords...)
	return w, nil
}

// voterDirectoryID checks a dynamic quorum's initial voters and returns the
// directory id they give o.NodeID (zero when it is not among them).
func voterDirectoryID(o FormatOptions) (uuid.UUID, error) {
	if o.InitialControllers == nil {
		return uuid.UUID{}, nil
	}
	if o.ControllerListener == "" {
		return uuid.UUID{}, errors.New("storage: format: a dynamic quorum needs the controller listener name")
	}
	var id uuid.UUID
	for _, c := range o.InitialControllers {
		if c.NodeID == o.NodeID {
			id = c.DirectoryID
		}
		if c.DirectoryID.IsZero() || uuid.ReservedDirectoryID(c.DirectoryID) {
			return uuid.UUID{}, fmt.Errorf("storage: format: initial controller %d has the reserved directory id %s", c.NodeID, c.DirectoryID)
		}
	}
	return id, nil
}

// format writes dir's files in their durable order: the bootstrap snapshot
// (a controller's metadata dir only), then meta.properties, whose presence
// marks the dir formatted. Like Kafka 4.4's storage tool it writes no
// bootstrap.checkpoint: the bootstrap records live in the snapshot.
func (w *dirWriter) format(dir string) error {
	isMeta := filepath.Clean(dir) == filepath.Clean(w.o.MetadataDir)
	fmt.Fprintf(w.out, "Formatting %s %s with metadata.version %s.\n", w.kind(isMeta), dir, w.features.mv.Name)
	if err := vfs.MkdirAll(w.fsys, dir, 0o755); err != nil {
		return fmt.Errorf("storage: format %s: %w", dir, err)
	}
	t := w.now()
	if isMeta && !w.o.Broker {
		snap := BootstrapSnapshot(w.features.levels[features.KRaftVersionName], w.o.InitialControllers, w.o.ControllerListener, w.records, t)
		if err := writeBootstrapSnapshot(w.fsys, dir, snap); err != nil {
			return fmt.Errorf("storage: format %s: %w", dir, err)
		}
	}
	mp := MetaProperties{Version: 1, ClusterID: w.o.ClusterID, NodeID: w.o.NodeID, DirectoryID: w.directoryID(isMeta)}
	if err := vfs.WriteFileAtomic(w.fsys, Path(dir), mp.Encode(t)); err != nil {
		return fmt.Errorf("storage: format: error while writing meta.properties file %s: %w", dir, err)
	}
	return nil
}

// kind names a dir in the progress line as kafka-storage does.
func (w *dirWriter) kind(isMeta bool) string {
	switch {
	case !isMeta:
		return "data directory"
	case w.o.InitialControllers == nil:
		return "metadata directory"
	case !w.voterDirID.IsZero():
		return "dynamic metadata voter directory"
	default:
		return "dynamic metadata directory"
	}
}

// directoryID picks a dir's directory.id: the initial voter's own for the
// metadata dir of a voter, otherwise a fresh one no other dir uses.
func (w *dirWriter) directoryID(isMeta bool) uuid.UUID {
	id := w.voterDirID
	if !isMeta || id.IsZero() {
		id = uuid.RandomDirectoryID()
		for w.seen[id] || id == w.voterDirID {
			id = uuid.RandomDirectoryID()
		}
	}
	w.seen[id] = true
	return id
}

func uniqueDirs(dirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		c := filepath.Clean(d)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// ensemble is what loadEnsemble found in a set of log dirs.
type ensemble struct {
	empty     []string // no meta.properties (or no dir yet)
	formatted []string // have meta.properties, in dir order
	props     map[string]MetaProperties
}

func loadEnsemble(fsys vfs.FS, dirs []string) (ensemble, error) {
	e := ensemble{props: map[string]MetaProperties{}}
	for _, d := range dirs {
		mp, err := readMetaProperties(fsys, d)
		switch {
		case err == nil:
			e.formatted = append(e.formatted, d)
			e.props[d] = mp
		case errors.Is(err, fs.ErrNotExist):
			e.empty = append(e.empty, d)
		default:
			return e, err
		}
	}
	return e, nil
}

// verify applies Kafka's cross-dir checks (MetaPropertiesEnsemble.verify):
// one cluster id and node id across dirs (each matching the expected value
// when given), v1 files complete, directory ids not reserved nor shared.
// clusterID "" and nodeID < 0 mean "take it from the first file".
func (e ensemble) verify(clusterID string, nodeID int32) error {
	clusterFrom, nodeFrom := "", ""
	if clusterID != "" {
		clusterFrom = "the expected value"
	}
	if nodeID >= 0 {
		nodeFrom = "the expected value"
	}
	seenDir := map[uuid.UUID]string{}
	for _, d := range e.formatted {
		mp := e.props[d]
		p := Path(d)
		switch {
		case mp.ClusterID == "":
			if mp.Version == 1 {
				return fmt.Errorf("cluster.id was not specified in the v1 file: %s", p)
			}
		case clusterID == "":
			clusterID, clusterFrom = mp.ClusterID, p
		case mp.ClusterID != clusterID:
			return fmt.Errorf("invalid cluster.id in %s: expected %s (from %s), but read %s", p, clusterID, clusterFrom, mp.ClusterID)
		}
		switch {
		case mp.NodeID < 0:
			if mp.Version == 1 {
				return fmt.Errorf("node.id was not specified in %s", p)
			}
		case nodeID < 0:
			nodeID, nodeFrom = mp.NodeID, p
		case mp.NodeID != nodeID:
			return fmt.Errorf("stored node id %d in %s doesn't match node id %d (from %s). If you moved your data, make sure your configured node id matches. If you intend to create a new node, you should remove all data in your data directories", mp.NodeID, p, nodeID, nodeFrom)
		}
		if !mp.DirectoryID.IsZero() {
			if uuid.ReservedDirectoryID(mp.DirectoryID) {
				return fmt.Errorf("invalid reserved directory id %s found in %s", mp.DirectoryID, p)
			}
			if prev, ok := seenDir[mp.DirectoryID]; ok {
				return fmt.Errorf("duplicate directory id %s found in %s and %s", mp.DirectoryID, prev, p)
			}
			seenDir[mp.DirectoryID] = p
		}
	}
	return nil
}

// Node is what a node learns from its formatted log dirs at start-up.
type Node struct {
	ClusterID string
	NodeID    int32
	// DirectoryID is the metadata dir's directory.id: the raft replica
	// directory id.
	DirectoryID uuid.UUID
	// Props holds every dir's meta.properties (keys are cleaned paths).
	Props map[string]MetaProperties
}

// Load runs the start-up checks Kafka makes on its log dirs: every dir (and
// metadataDir) is formatted with a version 1 meta.properties, all agree on
// cluster.id and node.id, node.id equals nodeID, directory ids are valid and
// distinct. A dir without directory.id gets a fresh one written back, as
// Kafka does at start-up.
func Load(dirs []string, metadataDir string, nodeID int32) (Node, error) {
	return LoadFS(nil, dirs, metadataDir, nodeID)
}

// LoadFS is Load with the dirs on fsys (nil = the OS).
func LoadFS(fsys vfs.FS, dirs []string, metadataDir string, nodeID int32) (Node, error) {
	fsys = vfs.Or(fsys)
	all := uniqueDirs(append(append([]string(nil), dirs...), metadataDir))
	ens, err := loadEnsemble(fsys, all)
	if err != nil {
		return Node{}, fmt.Errorf("storage: load: %w", err)
	}
	if len(ens.empty) > 0 {
		return Node{}, fmt.Errorf("storage: load: %w: no %s found in %s (has it been formatted with `controller format`?)", ErrNotFormatted, MetaPropertiesFile, ens.empty[0])
	}
	if err := ens.verify("", nodeID); err != nil {
		return Node{}, fmt.Errorf("storage: load: %w", err)
	}
	seen := map[uuid.UUID]bool{}
	for _, mp := range ens.props {
		seen[mp.DirectoryID] = true
	}
	n := Node{NodeID: nodeID, Props: ens.props}
	for _, d := range all {
		mp := ens.props[d]
		if mp.Version != 1 {
			return Node{}, fmt.Errorf("storage: load: %s has version %d; a KRaft node needs version 1", Path(d), mp.Version)
		}
		n.ClusterID = mp.ClusterID
		if mp.DirectoryID.IsZero() {
			id := uuid.RandomDirectoryID()
			for seen[id] {
				id = uuid.RandomDirectoryID()
			}
			seen[id] = true
			mp.DirectoryID = id
			if err := writeMetaProperties(fsys, d, mp, time.Now()); err != nil {
				return Node{}, fmt.Errorf("storage: load: add directory.id: %w", err)
			}
			ens.props[d] = mp
		}
	}
	n.DirectoryID = ens.props[filepath.Clean(metadataDir)].DirectoryID
	return n, nil
}

// ErrInfoProblems is returned by Info (with its text) when it found problems;
// `info` exits 1 then, as kafka-storage does.
var ErrInfoProblems = errors.New("storage: info found problems")

// Info describes log dirs as `kafka-storage info` does (same text). The error
// wraps ErrInfoProblems when a dir is missing, unformatted, unreadable or
// inconsistent with the others.
func Info(dirs []string) (string, error) { return InfoFS(nil, dirs) }

// InfoFS is Info with the dirs on fsys (nil = the OS).
func InfoFS(fsys vfs.FS, dirs []string) (string, error) {
	if len(dirs) == 0 {
		return "No directories specified.\n", nil
	}
	in := inspectDirs(vfs.Or(fsys), dirs)
	if len(in.problems) == 0 {
		return in.text(), nil
	}
	return in.text(), ErrInfoProblems
}

// dirsInfo is what Info found in a set of log dirs.
type dirsInfo struct {
	found    []string        // existing dirs, sorted
	problems []string        // in kafka-storage's words
	meta     *MetaProperties // the first formatted dir's
}

func inspectDirs(fsys vfs.FS, dirs []string) dirsInfo {
	var in dirsInfo
	sorted := append([]string(nil), dirs...)
	sort.Strings(sorted)
	for _, d := range sorted {
		st, err := fsys.Stat(d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				in.problems = append(in.problems, d+" does not exist")
			} else {
				in.problems = append(in.problems, fmt.Sprintf("%s cannot be read: %v", d, err))
			}
			continue
		}
		if !st.IsDir() {
			in.problems = append(in.problems, d+" is not a directory")
			continue
		}
		in.found = append(in.found, d)
		p := Path(d)
		if _, err := fsys.Stat(p); errors.Is(err, fs.ErrNotExist) {
			in.problems = append(in.problems, d+" is not formatted.")
			continue
		}
		mp, err := readMetaProperties(fsys, d)
		if err != nil {
			in.problems = append(in.problems, fmt.Sprintf("Error loading %s: %v", p, err))
			continue
		}
		if in.meta == nil {
			in.meta = &mp
		} else if in.meta.ClusterID != mp.ClusterID {
			in.problems = append(in.problems, "Mismatched cluster IDs between storage directories.")
		} else if in.meta.NodeID != mp.NodeID {
			in.problems = append(in.problems, "Mismatched node IDs between storage directories.")
		}
	}
	if in.meta != nil && in.meta.Version == 0 {
		in.problems = append(in.problems, "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories are formatted for legacy mode.")
	}
	return in
}

// text is kafka-storage info's output.
func (in dirsInfo) text() string {
	var b strings.Builder
	writeList(&b, "Found log directory:", "Found log directories:", in.found)
	if in.meta != nil {
		b.WriteString("Found metadata: " + in.meta.sortedProperties() + "\n\n")
	}
	writeList(&b, "Found problem:", "Found problems:", in.problems)
	return b.String()
}

// writeList writes a heading (one or many, by the count), the items
// indented, and a blank line; nothing when there are no items.
func writeList(b *strings.Builder, one, many string, items []string) {
	if len(items) == 0 {
		return
	}
	if len(items) == 1 {
		b.WriteString(one + "\n")
	} else {
		b.WriteString(many + "\n")
	}
	for _, it := range items {
		b.WriteString("  " + it + "\n")
	}
	b.WriteString("\n")
}

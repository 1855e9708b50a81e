package clusterid

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kraftd/kraftd/metadatalog/vfs"
)

// MetadataVersion is a metadata.version feature level with Kafka's name for
// it ("3.9-IV0").
type MetadataVersion struct {
	Name  string
	Level int16
}

// metadataVersions lists the metadata.version levels from the lowest a Kafka
// 4.x controller bootstraps from (3.3-IV3) to 4.0-IV3 (Kafka's
// MetadataVersion enum).
var metadataVersions = []MetadataVersion{
	{"3.3-IV3", 7}, {"3.4-IV0", 8}, {"3.5-IV0", 9}, {"3.5-IV1", 10}, {"3.5-IV2", 11},
	{"3.6-IV0", 12}, {"3.6-IV1", 13}, {"3.6-IV2", 14}, {"3.7-IV0", 15}, {"3.7-IV1", 16},
	{"3.7-IV2", 17}, {"3.7-IV3", 18}, {"3.7-IV4", 19}, {"3.8-IV0", 20}, {"3.9-IV0", 21},
	{"4.0-IV0", 22}, {"4.0-IV1", 23}, {"4.0-IV2", 24}, {"4.0-IV3", 25},
}

// DefaultMetadataVersion is what format writes without a release version: the
// newest level here that Kafka 4.0 shipped as production-ready.
var DefaultMetadataVersion = MetadataVersion{"4.0-IV3", 25}

// LookupMetadataVersion resolves a --release-version argument: a full name
// ("3.9-IV0") or a release ("3.9", meaning its last level).
func LookupMetadataVersion(name string) (MetadataVersion, error) {
	var found *MetadataVersion
	for i := range metadataVersions {
		v := &metadataVersions[i]
		if v.Name == name || strings.HasPrefix(v.Name, name+"-IV") {
			found = v
		}
	}
	if found == nil {
		names := make([]string, len(metadataVersions))
		for i, v := range metadataVersions {
			names[i] = v.Name
		}
		return MetadataVersion{}, fmt.Errorf("clusterid: unknown metadata.version %q; supported: %s", clip(name), strings.Join(names, ", "))
	}
	return *found, nil
}

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
	// MetadataVersion written to bootstrap.checkpoint; zero = default.
	MetadataVersion MetadataVersion
	// Features are extra feature levels (name -> level) written as
	// FeatureLevelRecords, as Kafka's --feature does (levels <= 0 and
	// kraft.version are not written, as in Kafka).
	Features map[string]int16
	// Out receives the progress lines kafka-storage prints (may be nil).
	Out io.Writer
	// Now stamps bootstrap.checkpoint batches and the meta.properties date
	// comment; nil = time.Now.
	Now func() time.Time
	// InitialControllers, when set, formats a dynamic quorum (kraft.version
	// 1, KIP-853): the metadata dir gets the bootstrap snapshot 0-0 with this
	// voter set, and, when NodeID is among them, that voter's directory id.
	// --standalone is one entry for the node itself with a fresh
	// RandomDirectoryID.
	InitialControllers []InitialController
	// ControllerListener names the voters' endpoint in the bootstrap
	// snapshot (the first of controller.listener.names).
	ControllerListener string
	// FS is where the dirs live; nil = the OS.
	FS vfs.FS
}

// Format prepares log dirs for a node as `kafka-storage format` does. Every
// dir must be unformatted unless IgnoreFormatted; dirs formatted with another
// cluster id or node id are an error either way. Each newly formatted dir gets
// bootstrap.checkpoint (metadata.version and features), the bootstrap
// snapshot when it is the metadata dir of a dynamic quorum, and last a
// version 1 meta.properties with a fresh directory id. Each file is written
// atomically and durably before the next, so a crash mid-format leaves the
// dir unformatted (Format can run again) rather than half formatted.
func Format(o FormatOptions) error {
	fsys := vfs.Or(o.FS)
	if _, err := ParseClusterID(o.ClusterID); err != nil {
		return fmt.Errorf("clusterid: format: %w", err)
	}
	if o.NodeID < 0 {
		return fmt.Errorf("clusterid: format: node.id must be >= 0, got %d", o.NodeID)
	}
	if o.MetadataDir == "" {
		return errors.New("clusterid: format: no metadata log dir")
	}
	mv := o.MetadataVersion
	if mv == (MetadataVersion{}) {
		mv = DefaultMetadataVersion
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	dirs := uniqueDirs(append(append([]string(nil), o.Dirs...), o.MetadataDir))
	ens, err := loadEnsemble(fsys, dirs)
	if err != nil {
		return fmt.Errorf("clusterid: format: %w", err)
	}
	if err := ens.verify(o.ClusterID, o.NodeID); err != nil {
		return fmt.Errorf("clusterid: format: %w", err)
	}
	if len(ens.formatted) > 0 && !o.IgnoreFormatted {
		return fmt.Errorf("clusterid: format: log directory %s is already formatted. Use --ignore-formatted to ignore this directory and format the others", ens.formatted[0])
	}
	if len(ens.empty) == 0 {
		fmt.Fprintln(out, "All of the log directories are already formatted.")
		return nil
	}
	seen := map[UUID]bool{}
	for _, mp := range ens.props {
		seen[mp.DirectoryID] = true
	}
	records := bootstrapRecords(mv, o.Features)
	var voterDirID UUID
	if o.InitialControllers != nil {
		if o.ControllerListener == "" {
			return errors.New("clusterid: format: a dynamic quorum needs the controller listener name")
		}
		for _, c := range o.InitialControllers {
			if c.NodeID == o.NodeID {
				voterDirID = c.DirectoryID
			}
			if c.DirectoryID.IsZero() || ReservedDirectoryID(c.DirectoryID) {
				return fmt.Errorf("clusterid: format: initial controller %d has the reserved directory id %s", c.NodeID, c.DirectoryID)
			}
		}
	}
	for _, dir := range ens.empty {
		kind := "data directory"
		isMeta := filepath.Clean(dir) == filepath.Clean(o.MetadataDir)
		if isMeta {
			switch {
			case o.InitialControllers == nil:
				kind = "metadata directory"
			case !voterDirID.IsZero():
				kind = "dynamic metadata voter directory"
			default:
				kind = "dynamic metadata directory"
			}
		}
		fmt.Fprintf(out, "Formatting %s %s with metadata.version %s.\n", kind, dir, mv.Name)
		if err := vfs.MkdirAll(fsys, dir, 0o755); err != nil {
			return fmt.Errorf("clusterid: format %s: %w", dir, err)
		}
		t := now()
		if err := writeBootstrapCheckpoint(fsys, dir, records, t); err != nil {
			return fmt.Errorf("clusterid: format %s: %w", dir, err)
		}
		if isMeta && o.InitialControllers != nil {
			if err := writeBootstrapSnapshot(fsys, dir, BootstrapSnapshot(o.InitialControllers, o.ControllerListener, t)); err != nil {
				return fmt.Errorf("clusterid: format %s: %w", dir, err)
			}
		}
		var id UUID
		if isMeta && !voterDirID.IsZero() {
			id = voterDirID
		} else {
			id = RandomDirectoryID()
			for seen[id] || id == voterDirID {
				id = RandomDirectoryID()
			}
		}
		seen[id] = true
		mp := MetaProperties{Version: 1, ClusterID: o.ClusterID, NodeID: o.NodeID, DirectoryID: id}
		if err := vfs.WriteFileAtomic(fsys, Path(dir), mp.Encode(t)); err != nil {
			return fmt.Errorf("clusterid: format: error while writing meta.properties file %s: %w", dir, err)
		}
	}
	return nil
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
	seenDir := map[UUID]string{}
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
			if ReservedDirectoryID(mp.DirectoryID) {
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
	DirectoryID UUID
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
		return Node{}, fmt.Errorf("clusterid: load: %w", err)
	}
	if len(ens.empty) > 0 {
		return Node{}, fmt.Errorf("clusterid: load: %w: no %s found in %s (has it been formatted with `controller format`?)", ErrNotFormatted, MetaPropertiesFile, ens.empty[0])
	}
	if err := ens.verify("", nodeID); err != nil {
		return Node{}, fmt.Errorf("clusterid: load: %w", err)
	}
	seen := map[UUID]bool{}
	for _, mp := range ens.props {
		seen[mp.DirectoryID] = true
	}
	n := Node{NodeID: nodeID, Props: ens.props}
	for _, d := range all {
		mp := ens.props[d]
		if mp.Version != 1 {
			return Node{}, fmt.Errorf("clusterid: load: %s has version %d; a KRaft node needs version 1", Path(d), mp.Version)
		}
		n.ClusterID = mp.ClusterID
		if mp.DirectoryID.IsZero() {
			id := RandomDirectoryID()
			for seen[id] {
				id = RandomDirectoryID()
			}
			seen[id] = true
			mp.DirectoryID = id
			if err := writeMetaProperties(fsys, d, mp, time.Now()); err != nil {
				return Node{}, fmt.Errorf("clusterid: load: add directory.id: %w", err)
			}
			ens.props[d] = mp
		}
	}
	n.DirectoryID = ens.props[filepath.Clean(metadataDir)].DirectoryID
	return n, nil
}

// ErrInfoProblems is returned by Info (with its text) when it found problems;
// `info` exits 1 then, as kafka-storage does.
var ErrInfoProblems = errors.New("clusterid: info found problems")

// Info describes log dirs as `kafka-storage info` does (same text). The error
// wraps ErrInfoProblems when a dir is missing, unformatted, unreadable or
// inconsistent with the others.
func Info(dirs []string) (string, error) { return InfoFS(nil, dirs) }

// InfoFS is Info with the dirs on fsys (nil = the OS).
func InfoFS(fsys vfs.FS, dirs []string) (string, error) {
	fsys = vfs.Or(fsys)
	var b strings.Builder
	if len(dirs) == 0 {
		b.WriteString("No directories specified.\n")
		return b.String(), nil
	}
	sorted := append([]string(nil), dirs...)
	sort.Strings(sorted)
	var problems, found []string
	var prev *MetaProperties
	for _, d := range sorted {
		st, err := fsys.Stat(d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, d+" does not exist")
			} else {
				problems = append(problems, fmt.Sprintf("%s cannot be read: %v", d, err))
			}
			continue
		}
		if !st.IsDir() {
			problems = append(problems, d+" is not a directory")
			continue
		}
		found = append(found, d)
		p := Path(d)
		if _, err := fsys.Stat(p); errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, d+" is not formatted.")
			continue
		}
		mp, err := readMetaProperties(fsys, d)
		if err != nil {
			problems = append(problems, fmt.Sprintf("Error loading %s: %v", p, err))
			continue
		}
		if prev == nil {
			prev = &mp
		} else if prev.ClusterID != mp.ClusterID {
			problems = append(problems, "Mismatched cluster IDs between storage directories.")
		} else if prev.NodeID != mp.NodeID {
			problems = append(problems, "Mismatched node IDs between storage directories.")
		}
	}
	if prev != nil && prev.Version == 0 {
		problems = append(problems, "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories are formatted for legacy mode.")
	}
	if len(found) > 0 {
		if len(found) == 1 {
			b.WriteString("Found log directory:\n")
		} else {
			b.WriteString("Found log directories:\n")
		}
		for _, d := range found {
			b.WriteString("  " + d + "\n")
		}
		b.WriteString("\n")
	}
	if prev != nil {
		b.WriteString("Found metadata: " + prev.sortedProperties() + "\n\n")
	}
	if len(problems) == 0 {
		return b.String(), nil
	}
	if len(problems) == 1 {
		b.WriteString("Found problem:\n")
	} else {
		b.WriteString("Found problems:\n")
	}
	for _, p := range problems {
		b.WriteString("  " + p + "\n")
	}
	b.WriteString("\n")
	return b.String(), ErrInfoProblems
}

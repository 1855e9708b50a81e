package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/javaprops"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
)

// MetaPropertiesFile is the name of the file format writes into every log dir.
const MetaPropertiesFile = "meta.properties"

// maxMetaPropertiesSize bounds what ReadMetaProperties loads: the real file is
// about 150 bytes, so anything near this is not a meta.properties file.
const maxMetaPropertiesSize = 1 << 20

// Property keys of meta.properties (Kafka's MetaProperties).
const (
	propVersion     = "version"
	propClusterID   = "cluster.id"
	propNodeID      = "node.id"
	propBrokerID    = "broker.id"
	propDirectoryID = "directory.id"
)

// ErrNotFormatted is wrapped when a log dir has no meta.properties.
var ErrNotFormatted = errors.New("storage: log directory is not formatted")

// MetaProperties is the content of a log dir's meta.properties.
type MetaProperties struct {
	// Version is 1 for KRaft (cluster.id and node.id required) or 0 (the
	// ZooKeeper-era layout, where node.id is read from broker.id).
	Version int
	// ClusterID is kept as text: Kafka compares cluster ids as strings.
	// "" = absent (only legal in version 0).
	ClusterID string
	// NodeID is -1 when absent (only legal in version 0).
	NodeID int32
	// DirectoryID is the zero uuid when absent; the metadata dir's id is the
	// raft replica directory id.
	DirectoryID uuid.UUID
}

// Path returns dir's meta.properties path.
func Path(dir string) string { return filepath.Join(dir, MetaPropertiesFile) }

// ParseMetaProperties decodes meta.properties text with Kafka's rules (name is
// used in errors). A missing version means 0; version 1 requires cluster.id
// and node.id.
func ParseMetaProperties(name string, data []byte) (MetaProperties, error) {
	parsed, err := javaprops.Parse(string(data))
	if err != nil {
		return MetaProperties{}, fmt.Errorf("storage: %s: %w", name, err)
	}
	props := parsed.Values
	mp := MetaProperties{NodeID: -1}
	if v, ok := props[propVersion]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || (n != 0 && n != 1) {
			return MetaProperties{}, fmt.Errorf("storage: %s: invalid meta.properties version string %q", name, clip(v))
		}
		mp.Version = n
	}
	idKey := propNodeID
	if mp.Version == 0 {
		idKey = propBrokerID
	}
	if v, ok := props[idKey]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return MetaProperties{}, fmt.Errorf("storage: %s: %s %q is not an int32", name, idKey, clip(v))
		}
		mp.NodeID = int32(n)
	} else if mp.Version == 1 {
		return MetaProperties{}, fmt.Errorf("storage: %s: node.id was not found", name)
	}
	if v, ok := props[propClusterID]; ok {
		mp.ClusterID = v
	} else if mp.Version == 1 {
		return MetaProperties{}, fmt.Errorf("storage: %s: cluster.id was not found", name)
	}
	if v, ok := props[propDirectoryID]; ok {
		u, err := uuid.Parse(v)
		if err != nil {
			return MetaProperties{}, fmt.Errorf("storage: %s: unable to read directory.id as a Uuid: %w", name, err)
		}
		mp.DirectoryID = u
	}
	return mp, nil
}

// ParseClusterID validates a cluster id given to format: a uuid in Kafka's
// text form that is not reserved. Kafka 3.7 validated it this way; later
// versions accept any string, which kraftd does not.
func ParseClusterID(s string) (uuid.UUID, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return uuid.Zero, fmt.Errorf("storage: cluster id must be 22 base64url characters, got %q: %w", clip(s), err)
	}
	if u.Reserved() {
		return uuid.Zero, fmt.Errorf("storage: cluster id %s is reserved", s)
	}
	return u, nil
}

// ReadMetaProperties reads dir/meta.properties. A missing file is an error
// wrapping ErrNotFormatted (and fs.ErrNotExist).
func ReadMetaProperties(dir string) (MetaProperties, error) {
	return readMetaProperties(vfs.OS, dir)
}

func readMetaProperties(fsys vfs.FS, dir string) (MetaProperties, error) {
	p := Path(dir)
	data, err := vfs.ReadFile(fsys, p, maxMetaPropertiesSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return MetaProperties{}, fmt.Errorf("%w: %s does not exist (run format first): %w", ErrNotFormatted, p, err)
		}
		return MetaProperties{}, fmt.Errorf("storage: %w", err)
	}
	return ParseMetaProperties(p, data)
}

// Encode renders mp as Java Properties text the way Kafka's storage tool
// writes it: an empty comment, a date comment, then key=value lines.
func (mp MetaProperties) Encode(now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("#\n#")
	b.WriteString(now.UTC().Format("Mon Jan 02 15:04:05 MST 2006"))
	b.WriteByte('\n')
	write := func(k, v string) {
		b.WriteString(javaprops.Escape(k, true))
		b.WriteByte('=')
		b.WriteString(javaprops.Escape(v, false))
		b.WriteByte('\n')
	}
	if mp.Version == 0 {
		if mp.NodeID >= 0 {
			write(propBrokerID, strconv.Itoa(int(mp.NodeID)))
		}
	} else {
		write(propNodeID, strconv.Itoa(int(mp.NodeID)))
	}
	if !mp.DirectoryID.IsZero() {
		write(propDirectoryID, mp.DirectoryID.String())
	}
	write(propVersion, strconv.Itoa(mp.Version))
	if mp.ClusterID != "" {
		write(propClusterID, mp.ClusterID)
	}
	return b.Bytes()
}

// properties returns mp as Kafka's MetaProperties.toProperties map.
func (mp MetaProperties) properties() map[string]string {
	m := map[string]string{propVersion: strconv.Itoa(mp.Version)}
	if mp.ClusterID != "" {
		m[propClusterID] = mp.ClusterID
	}
	if mp.Version == 0 {
		if mp.NodeID >= 0 {
			m[propBrokerID] = strconv.Itoa(int(mp.NodeID))
		}
	} else {
		m[propNodeID] = strconv.Itoa(int(mp.NodeID))
	}
	if !mp.DirectoryID.IsZero() {
		m[propDirectoryID] = mp.DirectoryID.String()
	}
	return m
}

// sortedProperties renders mp as Java prints a TreeMap: {a=1, b=2}.
func (mp MetaProperties) sortedProperties() string {
	m := mp.properties()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// WriteMetaProperties writes dir/meta.properties atomically and durably:
// meta.properties.tmp, fsync, rename, fsync dir (Kafka's
// PropertiesUtils.writePropertiesFile with fsync).
func WriteMetaProperties(dir string, mp MetaProperties) error {
	return writeMetaProperties(vfs.OS, dir, mp, time.Now())
}

// writeMetaProperties is WriteMetaProperties on fsys, with now for the date
// comment.
func writeMetaProperties(fsys vfs.FS, dir string, mp MetaProperties, now time.Time) error {
	if mp.Version != 0 && mp.Version != 1 {
		return fmt.Errorf("storage: write %s: unsupported version %d", Path(dir), mp.Version)
	}
	if mp.Version == 1 && (mp.ClusterID == "" || mp.NodeID < 0) {
		return fmt.Errorf("storage: write %s: version 1 needs cluster.id and node.id >= 0", Path(dir))
	}
	if err := vfs.WriteFileAtomic(fsys, Path(dir), mp.Encode(now)); err != nil {
		return fmt.Errorf("storage: write %s: %w", Path(dir), err)
	}
	return nil
}

// clip keeps error messages bounded for hostile input.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

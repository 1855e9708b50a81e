package kafkatest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kraftd/kraftd/uuid"
)

// NewUUID returns a fresh Kafka Uuid in its text form (22 characters of unpadded base64url)
// the way Kafka's Uuid.randomUuid makes one: a type-4 random UUID, never the reserved
// all-zero or Uuid(0,1) value, never text starting with '-'.
func NewUUID() string { return uuid.Random().String() }

// RandomUUID runs `kafka-storage random-uuid` and returns the printed id.
func (e *Env) RandomUUID(ctx context.Context) (string, error) {
	out, err := e.RunTool(ctx, ClassStorageTool, "random-uuid")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// StorageFormat runs `kafka-storage format -c config -t clusterID extra...` and returns its
// stdout (e.g. "Formatting metadata directory ... with metadata.version 4.4-IV2.").
func (e *Env) StorageFormat(ctx context.Context, config, clusterID string, extra ...string) (string, error) {
	args := append([]string{"format", "-c", config, "-t", clusterID}, extra...)
	return e.RunTool(ctx, ClassStorageTool, args...)
}

// StorageInfo runs `kafka-storage info -c config` and returns its stdout.
func (e *Env) StorageInfo(ctx context.Context, config string) (string, error) {
	return e.RunTool(ctx, ClassStorageTool, "info", "-c", config)
}

// DumpOptions select kafka-dump-log flags.
type DumpOptions struct {
	ClusterMetadataDecoder bool // --cluster-metadata-decoder: decode metadata records
	DeepIteration          bool // --deep-iteration
	PrintDataLog           bool // --print-data-log
	Extra                  []string
}

// DumpLog runs kafka-dump-log (org.apache.kafka.tools.DumpLogSegments) on files (segments,
// indexes or snapshot .checkpoint files) and returns its stdout.
func (e *Env) DumpLog(ctx context.Context, opt DumpOptions, files ...string) (string, error) {
	if len(files) == 0 {
		return "", fmt.Errorf("kafkatest: DumpLog: no files")
	}
	args := []string{"--files", strings.Join(files, ",")}
	if opt.ClusterMetadataDecoder {
		args = append(args, "--cluster-metadata-decoder")
	}
	if opt.DeepIteration {
		args = append(args, "--deep-iteration")
	}
	if opt.PrintDataLog {
		args = append(args, "--print-data-log")
	}
	args = append(args, opt.Extra...)
	return e.RunTool(ctx, ClassDumpLog, args...)
}

// MetadataQuorum runs `kafka-metadata-quorum --bootstrap-controller hostport args...`
// (e.g. "describe", "--status") and returns its stdout.
func (e *Env) MetadataQuorum(ctx context.Context, bootstrapController string, args ...string) (string, error) {
	return e.RunTool(ctx, ClassMetadataQuorum, append([]string{"--bootstrap-controller", bootstrapController}, args...)...)
}

// DescribeStatus runs `describe --status` and parses its "Label: value" lines.
func (e *Env) DescribeStatus(ctx context.Context, bootstrapController string) (map[string]string, error) {
	out, err := e.MetadataQuorum(ctx, bootstrapController, "describe", "--status")
	if err != nil {
		return nil, err
	}
	return ParseStatus(out)
}

// ParseStatus parses the output of `kafka-metadata-quorum describe --status`.
func ParseStatus(out string) (map[string]string, error) {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	for _, k := range []string{"ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "CurrentVoters"} {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("kafkatest: describe --status output lacks %s:\n%s", k, out)
		}
	}
	return m, nil
}

// DescribeReplication runs `describe --replication` and parses its table.
func (e *Env) DescribeReplication(ctx context.Context, bootstrapController string) ([]map[string]string, error) {
	out, err := e.MetadataQuorum(ctx, bootstrapController, "describe", "--replication")
	if err != nil {
		return nil, err
	}
	return ParseReplication(out)
}

// ParseReplication parses the tab-separated table of `describe --replication`: one map per
// row keyed by the header (NodeId, DirectoryId, LogEndOffset, Lag, LastFetchTimestamp,
// LastCaughtUpTimestamp, Status).
func ParseReplication(out string) ([]map[string]string, error) {
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cells := strings.Split(strings.TrimRight(line, "\t"), "\t")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		if len(cells) != len(header) {
			return nil, fmt.Errorf("kafkatest: replication row %q has %d cells, header has %d", line, len(cells), len(header))
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = cells[i]
		}
		rows = append(rows, row)
	}
	if len(header) == 0 || header[0] != "NodeId" {
		return nil, fmt.Errorf("kafkatest: unexpected describe --replication output:\n%s", out)
	}
	return rows, nil
}

// MetaProperties reads dir/meta.properties into a map (Java properties, the simple subset
// Kafka writes: comments, key=value lines).
func MetaProperties(dir string) (map[string]string, error) {
	path := filepath.Join(dir, "meta.properties")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kafkatest: %w", err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("kafkatest: %s: malformed line %q", path, line)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kafkatest: read %s: %w", path, err)
	}
	return m, nil
}

// DumpBatch is one batch line of kafka-dump-log output, with the record lines under it.
type DumpBatch struct {
	Fields  map[string]string // every "key: value" of the batch line (baseOffset, crc, ...)
	Records []DumpRecord
}

// Int returns a numeric field of the batch line.
func (b DumpBatch) Int(key string) (int64, error) {
	v, ok := b.Fields[key]
	if !ok {
		return 0, fmt.Errorf("kafkatest: batch has no %s: %v", key, b.Fields)
	}
	return strconv.ParseInt(v, 10, 64)
}

// DumpRecord is one "| offset: ..." line. Fields holds the fixed fields up to headerKeys;
// Rest is what follows them: "LeaderChange: {...}", "payload: {...}", "SnapshotHeader {...}".
type DumpRecord struct {
	Fields map[string]string
	Rest   string
}

// DumpFile is the output of kafka-dump-log for one file.
type DumpFile struct {
	Path    string
	Header  []string // lines before the first batch ("Log starting offset: 0", "Snapshot end offset: ...")
	Batches []DumpBatch
}

// ParseDumpLog parses kafka-dump-log output (batch lines, record lines under them).
func ParseDumpLog(out string) ([]DumpFile, error) {
	var files []DumpFile
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Dumping "):
			files = append(files, DumpFile{Path: strings.TrimPrefix(line, "Dumping ")})
		case len(files) == 0 || strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "baseOffset: "):
			f, err := parseKV(line)
			if err != nil {
				return nil, err
			}
			cur := &files[len(files)-1]
			cur.Batches = append(cur.Batches, DumpBatch{Fields: f})
		case strings.HasPrefix(line, "| offset: "):
			cur := &files[len(files)-1]
			if len(cur.Batches) == 0 {
				return nil, fmt.Errorf("kafkatest: record line before any batch: %q", line)
			}
			body := strings.TrimPrefix(line, "| ")
			head, rest, _ := strings.Cut(body, " headerKeys: ")
			f, err := parseKV(head)
			if err != nil {
				return nil, err
			}
			// headerKeys: [...] then the decoded value.
			if i := strings.Index(rest, "] "); i >= 0 {
				f["headerKeys"] = rest[:i+1]
				rest = rest[i+2:]
			} else {
				f["headerKeys"] = rest
				rest = ""
			}
			b := &cur.Batches[len(cur.Batches)-1]
			b.Records = append(b.Records, DumpRecord{Fields: f, Rest: rest})
		default:
			cur := &files[len(files)-1]
			if len(cur.Batches) == 0 {
				cur.Header = append(cur.Header, line)
			}
		}
	}
	return files, nil
}

// parseKV splits "k1: v1 k2: v2 ..." where values hold no spaces.
func parseKV(line string) (map[string]string, error) {
	tok := strings.Fields(line)
	m := map[string]string{}
	for i := 0; i < len(tok); i += 2 {
		k := tok[i]
		if !strings.HasSuffix(k, ":") || i+1 >= len(tok) {
			return nil, fmt.Errorf("kafkatest: cannot parse dump line %q at %q", line, k)
		}
		m[strings.TrimSuffix(k, ":")] = tok[i+1]
	}
	return m, nil
}

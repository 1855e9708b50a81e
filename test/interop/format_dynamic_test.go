package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/uuid"
)

// formatCase is one `format` run that Kafka's storage tool and kraftd's
// `controller format` both get: the same properties (dirs aside) and flags.
type formatCase struct {
	name   string
	static bool // controller.quorum.voters instead of bootstrap servers
	props  kafkatest.Props
	args   []string
	want   string // refused: a phrase both error outputs hold
}

// formatRun is what one side did.
type formatRun struct {
	root         string // holds data/ and meta/
	stdout, errs string
	code         int
}

const (
	dirA = "J8aAPcfLQt2bqs1JT_rMgQ"
	dirB = "MkU3OEVBNTcwNTJENDM2Qg"
)

// formatProps are a node's properties with data and metadata in separate
// dirs under root, so format's per-dir behaviour is visible.
func formatProps(c formatCase, port int, root string) kafkatest.Props {
	cfg := kafkatest.ControllerConfig{NodeID: 1, Port: port, BootstrapServers: []string{"127.0.0.1:" + strconv.Itoa(port)}}
	if c.static {
		cfg.BootstrapServers = nil
	}
	p := kafkatest.ControllerProps(cfg, filepath.Join(root, "data")+","+filepath.Join(root, "meta")).Merge(c.props)
	p["metadata.log.dir"] = filepath.Join(root, "meta")
	for _, key := range []string{"num.network.threads", "num.io.threads", "background.threads"} {
		delete(p, key) // JVM thread pools, which kraftd warns about
	}
	return p
}

// runFormatBoth runs every case on both sides, the JVM runs in parallel.
func runFormatBoth(t *testing.T, env *kafkatest.Env, cases []formatCase) (kafka, kraftd []formatRun) {
	t.Helper()
	bin := kafkatest.BuildKraftd(t)
	port := kafkatest.FreePort(t)
	id := kafkatest.NewUUID()
	kafka, kraftd = make([]formatRun, len(cases)), make([]formatRun, len(cases))
	var wg sync.WaitGroup
	jvms := make(chan struct{}, 3) // more JVMs at once only slow each other down
	for i, c := range cases {
		for side, runs := range map[string][]formatRun{"kafka": kafka, "kraftd": kraftd} {
			root := filepath.Join(t.TempDir(), side)
			config := filepath.Join(root, "server.properties")
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := formatProps(c, port, root).WriteFile(config); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"format", "-c", config, "-t", id}, c.args...)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if side == "kafka" {
					jvms <- struct{}{}
					defer func() { <-jvms }()
					runs[i] = kafkaStorageFormat(env, root, args)
				} else {
					runs[i] = runFormatCommand(root, exec.Command(bin, args...))
				}
			}()
		}
	}
	wg.Wait()
	return kafka, kraftd
}

// kafkaStorageFormat runs Kafka's storage tool with a longer bound than
// RunTool's: a loaded machine can take most of a minute to start a JVM.
func kafkaStorageFormat(env *kafkatest.Env, root string, args []string) formatRun {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", env.Classpath(), kafkatest.ClassStorageTool}, args...)
	return runFormatCommand(root, exec.CommandContext(ctx, env.Java, argv...))
}

func runFormatCommand(root string, cmd *exec.Cmd) formatRun {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return formatRun{root: root, stdout: stdout.String(), errs: stderr.String(), code: exitCode(err)}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// TestFormatRefusalsMatchKafka: kraftd's format refuses the flag and
// configuration combinations Kafka 4.4's storage tool refuses, with the same
// exit status and message, and accepts the ones it accepts.
func TestFormatRefusalsMatchKafka(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	voters := "1@localhost:9093:" + dirA
	cases := []formatCase{
		{name: "standalone with static voters", static: true, args: []string{"--standalone"}, want: "You cannot specify controller.quorum.voters"},
		{name: "dynamic controller without a quorum flag", want: "you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers"},
		{name: "standalone and initial controllers", args: []string{"-s", "-I", voters}, want: "not allowed with"},
		{name: "standalone on a broker", props: kafkatest.Props{"process.roles": "broker", "listeners": "PLAINTEXT://127.0.0.1:0",
			"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT", "inter.broker.listener.name": "PLAINTEXT"}, args: []string{"-s"}, want: "You can only use --standalone on a controller."},
		{name: "kraft.version 0 in a dynamic quorum", args: []string{"-N", "--feature", "kraft.version=0"}, want: "Cannot set kraft.version to 0 if controller.quorum.voters is empty"},
		{name: "kraft.version 1 with static voters", static: true, args: []string{"--feature", "kraft.version=1"}, want: "Cannot set kraft.version to 1 unless controller.quorum.voters is empty"},
		{name: "unknown feature", args: []string{"-N", "-f", "foo.version=1"}, want: "Unsupported feature: foo.version. Supported features are: eligible.leader.replicas.version, group.version, kraft.version, share.version, streams.version, transaction.version"},
		{name: "feature needs a newer release", args: []string{"-N", "-r", "3.9", "-f", "eligible.leader.replicas.version=1"}, want: "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"},
		{name: "bad initial controller", args: []string{"-I", "1@localhost:9093"}, want: "No colon following port could be found."},
		{name: "no initial controllers", args: []string{"-N"}},
		{name: "release implies no kraft.version", static: true, args: []string{"-r", "3.9-IV0", "-f", "group.version=1"}},
	}
	kafka, kraftd := runFormatBoth(t, env, cases)
	for i, c := range cases {
		k, g := kafka[i], kraftd[i]
		if k.code < 0 || g.code < 0 {
			t.Errorf("%s: a run did not finish: Kafka %q, kraftd %q", c.name, k.errs, g.errs)
			continue
		}
		if (k.code == 0) != (c.want == "") || (g.code == 0) != (k.code == 0) || (k.code != 0 && g.code != k.code) {
			t.Errorf("%s: Kafka exit %d, kraftd exit %d\nKafka: %s%s\nkraftd: %s%s", c.name, k.code, g.code, k.stdout, k.errs, g.stdout, g.errs)
			continue
		}
		if c.want != "" && (!strings.Contains(k.errs, c.want) || !strings.Contains(g.errs, c.want)) {
			t.Errorf("%s: want %q from both\nKafka: %s\nkraftd: %s", c.name, c.want, k.errs, g.errs)
		}
	}
}

// TestFormatDynamicMatchesKafka: for the same inputs kraftd's format prints
// Kafka's lines and writes Kafka's files: meta.properties with the same
// ids and the bootstrap snapshot with the same bytes (timestamps and CRCs,
// and --standalone's fresh directory id, aside); kraftd reads the snapshot
// Kafka wrote.
func TestFormatDynamicMatchesKafka(t *testing.T) {
	env := kafkatest.Require(t)
	cases := []formatCase{
		{name: "standalone", props: kafkatest.Props{"advertised.listeners": "CONTROLLER://localhost:19093"}, args: []string{"--standalone"}},
		{name: "initial voter", args: []string{"-I", "2@[::1]:9094:" + dirB + ",1@localhost:9093:" + dirA}},
		{name: "observer", args: []string{"--initial-controllers", "2@localhost:9094:" + dirB + ",3@localhost:9095:" + dirA, "-r", "4.0"}},
		{name: "no initial controllers", args: []string{"--no-initial-controllers"}},
		{name: "static", static: true, args: []string{"-r", "3.9", "-f", "group.version=1"}},
	}
	kafka, kraftd := runFormatBoth(t, env, cases)
	for i, c := range cases {
		k, g := kafka[i], kraftd[i]
		if k.code != 0 || g.code != 0 {
			t.Errorf("%s: Kafka exit %d, kraftd exit %d\nKafka: %s\nkraftd: %s", c.name, k.code, g.code, k.errs, g.errs)
			continue
		}
		if kl, gl := outputLines(k), outputLines(g); !slices.Equal(kl, gl) {
			t.Errorf("%s: output differs\nKafka:  %q\nkraftd: %q", c.name, kl, gl)
		}
		if kf, gf := formattedFiles(t, k), formattedFiles(t, g); !slices.Equal(kf, gf) {
			t.Errorf("%s: files differ\nKafka:  %q\nkraftd: %q", c.name, kf, gf)
		}
		kmeta, gmeta := readMeta(t, k), readMeta(t, g)
		if kmeta.ClusterID != gmeta.ClusterID || kmeta.NodeID != gmeta.NodeID || (c.name == "initial voter" && kmeta.DirectoryID != gmeta.DirectoryID) {
			t.Errorf("%s: meta.properties: Kafka %+v, kraftd %+v", c.name, kmeta, gmeta)
		}
		ksnap, gsnap := readSnapshot(t, k), readSnapshot(t, g)
		if c.name == "standalone" {
			ksnap = bytes.ReplaceAll(ksnap, kmeta.DirectoryID[:], gmeta.DirectoryID[:])
		}
		if kn, gn := normalizeSnapshot(t, ksnap), normalizeSnapshot(t, gsnap); !bytes.Equal(kn, gn) {
			t.Errorf("%s: bootstrap snapshots differ beyond timestamps\nKafka:  %x\nkraftd: %x", c.name, kn, gn)
		}
		checkSnapshotVoters(t, c.name, k, kmeta)
	}
}

// outputLines are a run's stdout lines with its root replaced, sorted (the
// dirs' order follows their paths' hashes, which differ between the sides).
func outputLines(r formatRun) []string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(r.stdout, r.root, "ROOT")), "\n")
	slices.Sort(lines)
	return lines
}

// formattedFiles lists the files a run wrote under its root, relative to
// it (no bootstrap.checkpoint since Kafka 4.4).
func formattedFiles(t *testing.T, r formatRun) []string {
	t.Helper()
	var files []string
	config := filepath.Join(r.root, "server.properties")
	err := filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == config {
			return err
		}
		rel, err := filepath.Rel(r.root, p)
		files = append(files, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readMeta(t *testing.T, r formatRun) storage.MetaProperties {
	t.Helper()
	mp, err := storage.ReadMetaProperties(filepath.Join(r.root, "meta"))
	if err != nil {
		t.Fatal(err)
	}
	return mp
}

func readSnapshot(t *testing.T, r formatRun) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.root, "meta", "__cluster_metadata-0", storage.BootstrapSnapshotName))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// normalizeSnapshot zeroes what differs between two runs on the same
// inputs: each batch's CRC and timestamps, and the SnapshotHeader's
// LastContainedLogTimestamp. The batches are parsed without CRC checks, as a
// test may have substituted bytes.
func normalizeSnapshot(t *testing.T, data []byte) []byte {
	t.Helper()
	out := bytes.Clone(data)
	for pos := 0; pos < len(out); {
		if len(out)-pos < 61 {
			t.Fatalf("truncated batch at %d", pos)
		}
		fixed := bytes.Clone(out[pos : pos+12+int(binary.BigEndian.Uint32(out[pos+8:]))])
		binary.BigEndian.PutUint32(fixed[17:], crc32.Checksum(fixed[21:], crc32.MakeTable(crc32.Castagnoli)))
		b, rest, err := protocol.DecodeBatch(fixed)
		if err != nil {
			t.Fatalf("batch at %d: %v", pos, err)
		}
		if len(rest) != 0 {
			t.Fatalf("batch at %d: %d trailing bytes", pos, len(rest))
		}
		end := pos + len(fixed)
		clear(out[pos+17 : pos+21]) // crc
		clear(out[pos+27 : pos+43]) // base and max timestamps
		if pos == 0 {
			var hdr protocol.SnapshotHeaderRecord
			if err := hdr.ReadFrom(b.Records[0].Value); err != nil {
				t.Fatal(err)
			}
			ts := binary.BigEndian.AppendUint64(nil, uint64(hdr.LastContainedLogTimestamp))
			if i := bytes.Index(out[pos+61:end], ts); i >= 0 {
				clear(out[pos+61+i : pos+61+i+8])
			}
		}
		pos = end
	}
	return out
}

// checkSnapshotVoters opens Kafka's metadata partition with kraftd's
// metadatalog and decodes the bootstrap snapshot's Voters record: the voter
// set the node's meta.properties promises.
func checkSnapshotVoters(t *testing.T, name string, r formatRun, mp storage.MetaProperties) {
	t.Helper()
	l, err := metadatalog.OpenReadOnly(filepath.Join(r.root, "meta", "__cluster_metadata-0"))
	if err != nil {
		t.Fatalf("%s: metadatalog cannot open Kafka's dir: %v", name, err)
	}
	defer l.Close()
	id := raft.OffsetAndEpoch{}
	if !slices.Contains(l.Snapshots(), id) {
		t.Fatalf("%s: metadatalog sees snapshots %v, want 0-0", name, l.Snapshots())
	}
	sr, err := l.OpenSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	data, err := io.ReadAll(io.NewSectionReader(sr, 0, sr.Size()))
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := protocol.DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	var voters *protocol.VotersRecord
	for _, rec := range first.Records {
		if typ, _, err := protocol.ReadControlRecord(rec); err == nil && typ == protocol.ControlKRaftVoters {
			voters = &protocol.VotersRecord{}
			if err := voters.ReadFrom(rec.Value); err != nil {
				t.Fatalf("%s: Kafka's Voters record: %v", name, err)
			}
		}
	}
	switch name {
	case "standalone":
		if voters == nil || len(voters.Voters) != 1 || voters.Voters[0].VoterID != 1 || uuid.UUID(voters.Voters[0].VoterDirectoryID) != mp.DirectoryID ||
			voters.Voters[0].Endpoints[0] != (protocol.VotersRecordEndpoint{Name: kafkatest.ControllerListener, Host: "localhost", Port: 19093}) {
			t.Errorf("%s: Kafka's voters %+v, want node 1 at localhost:19093 with directory %s", name, voters, mp.DirectoryID)
		}
	case "initial voter":
		if voters == nil || len(voters.Voters) != 2 || voters.Voters[0].Endpoints[0].Host != "localhost" || voters.Voters[1].Endpoints[0].Host != "0:0:0:0:0:0:0:1" ||
			mp.DirectoryID.String() != dirA {
			t.Errorf("%s: Kafka's voters %+v, meta.properties %+v", name, voters, mp)
		}
	case "static":
		if voters != nil {
			t.Errorf("%s: a static quorum's snapshot has voters %+v", name, voters)
		}
	}
}

// TestKraftdStandaloneStartsKafka: a dir kraftd formats with --standalone
// starts a Kafka 4.4 controller configured only with bootstrap servers; it
// becomes leader and reports itself as the one voter, with the directory id
// kraftd wrote.
func TestKraftdStandaloneStartsKafka(t *testing.T) {
	env := kafkatest.Require(t)
	bin := kafkatest.BuildKraftd(t)
	work := t.TempDir()
	dir := filepath.Join(work, "data")
	port := kafkatest.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cfg := kafkatest.ControllerConfig{NodeID: 1, ClusterID: kafkatest.NewUUID(), Port: port, BootstrapServers: []string{addr}, NoFormat: true, Dir: dir}
	config := filepath.Join(work, "server.properties")
	if err := kafkatest.ControllerProps(cfg, dir).WriteFile(config); err != nil {
		t.Fatal(err)
	}
	if r := runFormatCommand(work, exec.Command(bin, "format", "-c", config, "-t", cfg.ClusterID, "--standalone")); r.code != 0 {
		t.Fatalf("kraftd format --standalone: exit %d: %s", r.code, r.errs)
	}
	mp, err := storage.ReadMetaProperties(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctrl := env.StartController(t, cfg)
	if err := ctrl.WaitLog("Completed transition to Leader", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows, err := env.DescribeReplication(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["NodeId"] != "1" || rows[0]["DirectoryId"] != mp.DirectoryID.String() || rows[0]["Status"] != "Leader" {
		t.Errorf("describe --replication: %v, want node 1 leading with directory %s", rows, mp.DirectoryID)
	}
}

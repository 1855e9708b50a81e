package kafkatest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
)

var (
	kraftdOnce sync.Once
	kraftdBin  string
	kraftdErr  error
)

// BuildKraftd builds kraftd's controller binary (./cmd/controller) once per test binary into
// test/interop/target (git-ignored) and returns its path. Failures are fatal to the test.
func BuildKraftd(t testing.TB) string {
	t.Helper()
	kraftdOnce.Do(func() { kraftdBin, kraftdErr = buildKraftd() })
	if kraftdErr != nil {
		t.Fatal(kraftdErr)
	}
	return kraftdBin
}

func buildKraftd() (string, error) {
	root, err := KraftdRoot()
	if err != nil {
		return "", err
	}
	target := filepath.Join(root, "test", "interop", "target")
	if err := os.MkdirAll(target, 0o755); err != nil {
		return "", fmt.Errorf("kafkatest: build kraftd: %w", err)
	}
	bin := filepath.Join(target, "controller")
	// Several test binaries may build at once: build aside, then rename into place.
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "./cmd/controller")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("kafkatest: go build ./cmd/controller: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("kafkatest: build kraftd: %w", err)
	}
	return bin, nil
}

// KraftdRoot is the kraftd module's directory, where its binary is built (the harness module
// sits in its test/): three levels above this file, or (under -trimpath) two above the
// interop dir holding lib.
func KraftdRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))), nil
	}
	lib, err := findLib()
	if err != nil {
		return "", err
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(lib))), nil
}

// KraftdConfig describes a kraftd node process on 127.0.0.1.
type KraftdConfig struct {
	// Command is "start" (default: a controller node; its dir is formatted with
	// `controller format` unless NoFormat) or "test-kraft-server-start" (TestRaftServer's
	// counterpart: no format, cluster id and topic fixed like Kafka's).
	Command          string
	NodeID           int32
	ClusterID        string // start: formatted cluster id, NewUUID() when empty
	Port             int    // FreePort when 0
	Voters           []string
	BootstrapServers []string
	DirectoryID      string // test-kraft-server-start: --replica-directory-id, NewUUID() when empty
	Dir              string // log dir; fresh when empty
	NoFormat         bool
	FormatArgs       []string // start: extra `controller format` flags (--standalone, -N ...)
	Props            Props
	Args             []string // extra command flags (e.g. --throughput, --record-size)
}

// Kraftd is a running kraftd node.
type Kraftd struct {
	*Process
	NodeID      int32
	ClusterID   string
	Port        int
	Addr        string
	LogDir      string
	ConfigPath  string
	DirectoryID string // test-kraft-server-start, or start after a dynamic format
}

// StartKraftd builds (once) and starts a kraftd node with the same properties Kafka nodes
// get from ControllerProps, and waits until it listens. It is stopped when the test ends.
func StartKraftd(t testing.TB, cfg KraftdConfig) *Kraftd {
	t.Helper()
	bin := BuildKraftd(t)
	if cfg.Command == "" {
		cfg.Command = "start"
	}
	if cfg.Port == 0 {
		cfg.Port = FreePort(t)
	}
	work := t.TempDir()
	dir := cfg.Dir
	if dir == "" {
		dir = filepath.Join(work, "data")
	}
	k := &Kraftd{NodeID: cfg.NodeID, Port: cfg.Port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)),
		LogDir: dir, ConfigPath: filepath.Join(work, "kraftd.properties")}
	props := ControllerProps(ControllerConfig{NodeID: cfg.NodeID, Port: cfg.Port, Voters: cfg.Voters, BootstrapServers: cfg.BootstrapServers}, dir)
	// Thread-pool sizes are JVM settings kraftd does not have.
	for _, key := range []string{"num.network.threads", "num.io.threads", "background.threads"} {
		delete(props, key)
	}
	// A kraftd controller defers leadership to Kafka's controllers by default; the harness
	// runs it with normal leadership, so tests can make it lead, unless Props say otherwise.
	props[config.LeadershipDeferralKey] = "false"
	// Nor is it the active controller unless a test asks (ActiveKraftdProps): the tests
	// written before kraftd could be active judge it as a raft voter and standby.
	props[config.ActiveControllerKey] = "false"
	props.Merge(cfg.Props)
	if err := props.WriteFile(k.ConfigPath); err != nil {
		t.Fatal(err)
	}
	args := []string{cfg.Command, "--config", k.ConfigPath}
	switch cfg.Command {
	case "start":
		if cfg.ClusterID == "" {
			cfg.ClusterID = NewUUID()
		}
		k.ClusterID = cfg.ClusterID
		if !cfg.NoFormat {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			format := append([]string{"format", "--config", k.ConfigPath, "--cluster-id", cfg.ClusterID}, cfg.FormatArgs...)
			out, err := exec.CommandContext(ctx, bin, format...).CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("kafkatest: controller format: %v\n%s", err, out)
			}
		}
		if meta, err := MetaProperties(dir); err == nil {
			k.DirectoryID = meta["directory.id"]
		}
	case "test-kraft-server-start":
		if cfg.DirectoryID == "" {
			cfg.DirectoryID = NewUUID()
		}
		k.DirectoryID = cfg.DirectoryID
		k.ClusterID = RaftTestClusterID
		args = append(args, "--replica-directory-id", cfg.DirectoryID)
	default:
		t.Fatalf("kafkatest: unknown kraftd command %q", cfg.Command)
	}
	args = append(args, cfg.Args...)
	p, err := startProcess(t, fmt.Sprintf("kraftd-%s-%d", cfg.Command, cfg.NodeID), work, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	k.Process = p
	if err := p.waitListening(k.Addr, StartTimeout); err != nil {
		p.DumpLog(80)
		t.Fatal(err)
	}
	return k
}

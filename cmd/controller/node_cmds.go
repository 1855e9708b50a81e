package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	mrand "math/rand/v2"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/controller"
	ctrlcluster "github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/replication"
	"github.com/kraftd/kraftd/internal/hostlookup"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/workload"
)

// testRaftClusterID is TestRaftServer's fixed cluster id, Uuid.ZERO_UUID
// (docs/design/state-machine.md 1.5; its partition is topics.RaftPerformanceTest): a kraftd
// node must use it to share a quorum with Kafka's TestRaftServer.
var testRaftClusterID = uuid.Zero.String()

// nodeFlags are the flags shared by start and test-kraft-server-start.
type nodeFlags struct {
	configFlags
	logFlags
	shutdownTimeout time.Duration
	cpuProfile      string
	maintainEvery   time.Duration
	metricsListener string
}

func (f *nodeFlags) register(fs *pflag.FlagSet) {
	f.configFlags.register(fs)
	f.logFlags.register(fs)
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 5*time.Second, "bound on graceful shutdown after SIGINT/SIGTERM (resign, hand over, flush)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file until shutdown")
	fs.DurationVar(&f.maintainEvery, "log-maintenance-interval", node.DefaultMaintainEvery, "how often log retention (metadata.max.retention.*) is applied")
	_ = fs.MarkHidden("log-maintenance-interval")
	fs.StringVar(&f.metricsListener, "metrics-listener", "", "serve /metrics, /livez and /readyz on http://HOST:PORT (overrides "+config.MetricsListenerKey+")")
}

// applyMetricsListener lets --metrics-listener override the config key,
// with the key's checks.
func (f *nodeFlags) applyMetricsListener(cfg *config.Config) error {
	if f.metricsListener == "" {
		return nil
	}
	addr, err := config.ParseMetricsListener(f.metricsListener)
	if err == nil {
		err = cfg.CheckMetricsAddr(addr)
	}
	if err != nil {
		return fmt.Errorf("--metrics-listener: %w", err)
	}
	cfg.MetricsListener = addr
	return nil
}

// runStart runs a controller on __cluster_metadata, configured by a file
// and/or environment variables (env_start.go); the log dirs must have been
// formatted, or CLUSTER_ID be set.
func runStart(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("start", stderr)
	var f nodeFlags
	f.register(fs)
	fs.Lookup("config").Usage = "Kafka properties file; KAFKA_* environment variables override it (optional with them)"
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	lg, err := f.newLogger(stderr)
	if err != nil {
		return err
	}
	defer lg.Sync() //nolint:errcheck
	environ := os.Environ()
	p, err := startProperties(f.configFlags, environ)
	if err != nil {
		return err
	}
	cfg, err := config.New(p, false)
	if err != nil {
		return err
	}
	logWarnings(lg, cfg)
	if clusterID := lookupEnv(environ, config.ClusterIDEnv); clusterID != "" {
		if err := formatFromEnv(cfg, clusterID, lg); err != nil {
			return err
		}
	}
	id, err := storage.Load(cfg.LogDirs, cfg.MetadataLogDir, cfg.NodeID)
	if err != nil {
		return err
	}
	var active *controller.ActiveOptions
	if cfg.ActiveController {
		active = &controller.ActiveOptions{
			Cluster: ctrlcluster.Settings{ClusterID: id.ClusterID, NodeID: cfg.NodeID,
				SessionTimeout: time.Duration(cfg.BrokerSessionTimeoutMs) * time.Millisecond,
				Static:         map[string]string{"min.insync.replicas": cfg.MinInsyncReplicas}},
			MaxIdleInterval:   time.Duration(cfg.MaxIdleIntervalMs) * time.Millisecond,
			HeartbeatDeadline: time.Duration(cfg.BrokerHeartbeatIntervalMs) * time.Millisecond / 2,
			Replication: &replication.Settings{NodeID: cfg.NodeID, DefaultNumPartitions: cfg.NumPartitions,
				DefaultReplicationFactor: cfg.DefaultReplicationFactor, DeleteTopicEnable: cfg.DeleteTopicEnable,
				Static: map[string]string{"min.insync.replicas": cfg.MinInsyncReplicas}},
			Seed:                         mrand.Int64(),
			AutoLeaderRebalance:          cfg.AutoLeaderRebalance,
			LeaderImbalanceCheckInterval: time.Duration(cfg.LeaderImbalanceCheckIntervalSeconds) * time.Second,
			UncleanElectionInterval:      time.Duration(cfg.UncleanElectionIntervalMs) * time.Millisecond,
			LookupHost:                   hostlookup.Resolves,
			QuorumVoterIDs:               staticVoterIDs(cfg),
		}
	}
	app, err := controller.New(controller.Options{
		NodeID:                   cfg.NodeID,
		MaxBytesBetweenSnapshots: cfg.MaxRecordBytesBetweenSnapshots,
		MaxSnapshotInterval:      time.Duration(cfg.MaxSnapshotIntervalMs) * time.Millisecond,
		Logger:                   lg.Named("controller").With(zap.Int32("node_id", cfg.NodeID)),
		Start:                    time.Now(),
		StaticProperties:         maps.Clone(p.Values),
		Active:                   active,
	})
	if err != nil {
		return err
	}
	return runNode(f, cfg, node.Options{
		ClusterID: id.ClusterID, DirectoryID: id.DirectoryID,
		TopicName: topics.ClusterMetadata, TopicID: uuid.MetadataTopicID,
		App: app,
	}, lg, nil)
}

// staticVoterIDs are controller.quorum.voters' ids, ascending.
func staticVoterIDs(cfg *config.Config) []int32 {
	var ids []int32
	for _, v := range cfg.Voters {
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// runTestServer is Kafka's TestRaftServer: a quorum node on
// __raft_performance_test with the workload. An unformatted metadata dir is
// formatted on first start with TestRaftServer's cluster id.
func runTestServer(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("test-kraft-server-start", stderr)
	var f nodeFlags
	f.register(fs)
	dirIDText := fs.String("replica-directory-id", "", "this replica's directory id (a uuid, not zero); required")
	var wc workload.Config
	fs.IntVar(&wc.Throughput, "throughput", 20000, "records/s offered while leader, an open loop as TestRaftServer's (only the leader's append buffer holds records back); 0 = unthrottled (bounded by --max-in-flight)")
	fs.IntVar(&wc.RecordSize, "record-size", 256, "record size in bytes")
	fs.IntVar(&wc.MaxInFlight, "max-in-flight", 10000, "with --throughput 0: at most this many appended but uncommitted records")
	fs.Var(&wc.StatsFormat, "stats-format", "stats lines: text, json (one object per line), kafka (TestRaftServer's throughput and latency line) or csv (a header, then the json fields as one row per interval)")
	statsJSON := fs.Bool("stats-json", false, "print stats as one JSON object per line (--stats-format json)")
	fs.DurationVar(&wc.StatsEvery, "stats-interval", 5*time.Second, "how often to print stats")
	fs.DurationVar(&wc.AppendTick, "append-interval", time.Millisecond, "with --throughput > 0, records that fell due are appended together, one batch at most this often (TestRaftServer's throttle counts whole milliseconds); their latency still runs from when each fell due")
	fs.DurationVar(&wc.Warmup, "stats-warmup", 0, "leave appends of the first DURATION after start out of the final summary's latency")
	journal := fs.String("commit-journal", "", "append each batch this node appended as leader and saw committed to FILE (offsets, epoch, CRC; fsynced)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dirIDText == "" {
		return errors.New("--replica-directory-id is required")
	}
	dirID, err := uuid.Parse(*dirIDText)
	if err != nil {
		return fmt.Errorf("--replica-directory-id: %w", err)
	}
	if dirID.IsZero() {
		return errors.New("--replica-directory-id: the zero uuid is not a directory id")
	}
	switch {
	case *statsJSON && fs.Changed("stats-format") && wc.StatsFormat != workload.StatsJSON:
		return fmt.Errorf("--stats-json and --stats-format %s: pick one", wc.StatsFormat)
	case *statsJSON:
		wc.StatsFormat = workload.StatsJSON
	}
	switch {
	case wc.Throughput < 0:
		return fmt.Errorf("--throughput %d: must be >= 0", wc.Throughput)
	case wc.RecordSize < 1 || wc.RecordSize > 1<<20:
		return fmt.Errorf("--record-size %d: must be in 1..1048576", wc.RecordSize)
	case wc.AppendTick <= 0 || wc.AppendTick > time.Second:
		return fmt.Errorf("--append-interval %v: must be in (0, 1s]", wc.AppendTick)
	case wc.MaxInFlight < 1:
		return fmt.Errorf("--max-in-flight %d: must be >= 1", wc.MaxInFlight)
	}
	lg, err := f.newLogger(stderr)
	if err != nil {
		return err
	}
	defer lg.Sync() //nolint:errcheck
	p, err := f.load()
	if err != nil {
		return err
	}
	// TestRaftServer forces process.roles=controller. kraftd keeps an
	// explicit process.roles=broker: that node is an observer (it follows
	// the log, never votes, runs no workload).
	observer := false
	if v, ok := p.Get(config.ProcessRolesKey); ok && strings.TrimSpace(strings.ToLower(v)) == "broker" {
		observer = true
	}
	cfg, err := config.New(p, !observer)
	if err != nil {
		return err
	}
	logWarnings(lg, cfg)
	clusterID, err := ensureTestFormatted(cfg, dirID, lg)
	if err != nil {
		return err
	}
	// Observers print commit stats too (no latency: they append nothing).
	wc.Observe = observer
	wc.SnapshotEvery = cfg.MaxRecordBytesBetweenSnapshots
	if *journal != "" {
		if wc.Journal, err = workload.OpenJournal(*journal); err != nil {
			return err
		}
		defer wc.Journal.Close()
	}
	w := workload.New(wc, cfg.NodeID, cfg.IsVoter(), stdout, lg.Named("workload").With(zap.Int32("node_id", cfg.NodeID)), time.Now())
	return runNode(f, cfg, node.Options{
		ClusterID: clusterID, DirectoryID: dirID,
		TopicName: topics.RaftPerformanceTest, TopicID: topics.RaftPerformanceTestID,
		App: wrapApp(w),
	}, lg, func() { w.PrintSummary(time.Now()) })
}

// wrapApp is the identity, except in a binary built with the
// kraftd_panic_hook tag for tests (panic_hook.go).
var wrapApp = func(a node.Application) node.Application { return a }

// ensureTestFormatted formats the metadata dir the way TestRaftServer needs
// (cluster id AAAAAAAAAAAAAAAAAAAAAA) when it has no meta.properties, and
// returns the cluster id of the dir. A dir formatted earlier (also by
// `format` with another cluster id) keeps its id.
func ensureTestFormatted(cfg *config.Config, dirID uuid.UUID, lg *zap.Logger) (string, error) {
	dir := cfg.MetadataLogDir
	mp, err := storage.ReadMetaProperties(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := vfs.MkdirAll(vfs.OS, dir, 0o755); err != nil {
			return "", fmt.Errorf("create metadata log dir: %w", err)
		}
		mp = storage.MetaProperties{Version: 1, ClusterID: testRaftClusterID, NodeID: cfg.NodeID, DirectoryID: dirID}
		if err := storage.WriteMetaProperties(dir, mp); err != nil {
			return "", err
		}
		lg.Info("formatted metadata log dir for the raft performance test", zap.String("dir", dir),
			zap.String("cluster_id", mp.ClusterID), zap.Int32("node_id", mp.NodeID), zap.Stringer("directory_id", dirID))
	case err != nil:
		return "", err
	}
	id, err := storage.Load(nil, dir, cfg.NodeID)
	if err != nil {
		return "", err
	}
	if id.DirectoryID != dirID {
		lg.Warn("--replica-directory-id differs from directory.id in meta.properties; using the flag as TestRaftServer does",
			zap.Stringer("flag", dirID), zap.Stringer("meta_properties", id.DirectoryID))
	}
	return id.ClusterID, nil
}

func logWarnings(lg *zap.Logger, cfg *config.Config) {
	for _, w := range cfg.Warnings {
		lg.Warn("config: " + w)
	}
}

// runNode runs a node until SIGINT or SIGTERM and its graceful shutdown; a
// second signal exits at once. ran (if not nil) runs once the node stopped.
func runNode(f nodeFlags, cfg *config.Config, o node.Options, lg *zap.Logger, ran func()) error {
	lg = lg.With(zap.Int32("node_id", cfg.NodeID))
	if f.shutdownTimeout <= 0 {
		return fmt.Errorf("--shutdown-timeout %v: must be positive", f.shutdownTimeout)
	}
	if err := f.applyMetricsListener(cfg); err != nil {
		return err
	}
	o.Logger, o.ShutdownTimeout, o.MaintainEvery = lg, f.shutdownTimeout, f.maintainEvery
	n, err := node.New(cfg, o)
	if err != nil {
		return err
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	stopped := make(chan struct{})
	defer close(stopped)
	go handleSignals(sigs, cancel, stopped, lg)
	err = n.Run(ctx)
	if ran != nil {
		ran()
	}
	return err
}

// handleSignals starts the graceful shutdown on the first signal and exits
// the process on the second, without waiting for the shutdown to finish.
func handleSignals(sigs <-chan os.Signal, shutdown func(), stopped <-chan struct{}, lg *zap.Logger) {
	select {
	case sig := <-sigs:
		lg.Info("signal received: shutting down gracefully (a second signal exits at once)", zap.Stringer("signal", sig))
		shutdown()
	case <-stopped:
		return
	}
	select {
	case sig := <-sigs:
		lg.Warn("second signal: exiting at once", zap.Stringer("signal", sig))
		os.Exit(1)
	case <-stopped:
	}
}

func startCPUProfile(path string) (stop func(), err error) {
	pf, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

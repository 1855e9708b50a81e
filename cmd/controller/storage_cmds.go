package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/security"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/uuid"
)

// runRandomUUID prints one cluster id, as kafka-storage random-uuid does.
func runRandomUUID(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("random-uuid", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, uuid.Random().String())
	return nil
}

// runFormat formats the configured log dirs as Kafka 4.4's kafka-storage
// format does, with its checks in its order and its messages.
func runFormat(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("format", stderr)
	var cf configFlags
	cf.register(fs)
	var f formatFlags
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	p, err := cf.load()
	if err != nil {
		return err
	}
	cfg, err := config.New(p, false)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	opts, err := f.options(cfg)
	if err != nil {
		return err
	}
	opts.Out = stdout
	return storage.Format(opts)
}

// formatFlags are kafka-storage format's flags.
type formatFlags struct {
	clusterID, release    string
	ignore                bool
	features              []string
	standalone, noInitial bool
	initial               string
	scram                 []string
}

func (f *formatFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.clusterID, "cluster-id", "t", "", "cluster id (22 base64url characters, see random-uuid); required")
	fs.BoolVarP(&f.ignore, "ignore-formatted", "g", false, "skip directories that are already formatted instead of failing")
	fs.StringVarP(&f.release, "release-version", "r", "", "release version of the initial feature settings (3.3-IV3 up to "+features.LatestProduction.Name+", the default)")
	fs.StringArrayVarP(&f.features, "feature", "f", nil, "feature level name=level, e.g. kraft.version=1 (repeatable)")
	fs.BoolVarP(&f.standalone, "standalone", "s", false, "format a controller as a single-node dynamic quorum (needs controller.quorum.bootstrap.servers, not controller.quorum.voters)")
	fs.BoolVarP(&f.noInitial, "no-initial-controllers", "N", false, "format a node of a dynamic quorum without an initial voter set (it joins later)")
	fs.StringVarP(&f.initial, "initial-controllers", "I", "", "the initial voters of a dynamic quorum: id@host:port:directoryId,... (the same on every node)")
	fs.StringArrayVarP(&f.scram, "add-scram", "S", nil, "a SCRAM credential for the bootstrap metadata, e.g. 'SCRAM-SHA-512=[name=alice,password=alice-secret]' (repeatable)")
}

// check applies what kafka-storage's argument parser enforces: a cluster id,
// and at most one of the three quorum flags.
func (f *formatFlags) check() error {
	if f.clusterID == "" {
		return errors.New("--cluster-id is required (generate one with `controller random-uuid`)")
	}
	var set []string
	if f.standalone {
		set = append(set, "--standalone/-s")
	}
	if f.noInitial {
		set = append(set, "--no-initial-controllers/-N")
	}
	if f.initial != "" {
		set = append(set, "--initial-controllers/-I")
	}
	if len(set) > 1 {
		return fmt.Errorf("argument %s: not allowed with argument %s", set[1], set[0])
	}
	return nil
}

// options turns the flags and the node's config into format options,
// refusing what Kafka 4.4's StorageTool refuses, in its order.
func (f *formatFlags) options(cfg *config.Config) (storage.FormatOptions, error) {
	opts := storage.FormatOptions{
		Dirs:               cfg.LogDirs,
		MetadataDir:        cfg.MetadataLogDir,
		ClusterID:          f.clusterID,
		NodeID:             cfg.NodeID,
		IgnoreFormatted:    f.ignore,
		Broker:             !cfg.IsController(),
		DynamicQuorum:      len(cfg.Voters) == 0,
		ControllerListener: cfg.RaftListener(),
	}
	var err error
	if f.release != "" {
		if opts.MetadataVersion, err = features.LookupMetadataVersion(f.release); err != nil {
			return opts, err
		}
	}
	if opts.Features, err = parseFeatures(f.features); err != nil {
		return opts, err
	}
	for _, a := range f.scram {
		rec, err := security.ParseAddScram(a)
		if err != nil {
			return opts, err
		}
		opts.ScramRecords = append(opts.ScramRecords, rec)
	}
	if !opts.DynamicQuorum && (f.initial != "" || f.standalone) {
		return opts, errors.New("You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. " +
			"If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.")
	}
	if f.initial != "" {
		if opts.InitialControllers, err = storage.ParseInitialControllers(f.initial); err != nil {
			return opts, err
		}
	}
	if f.standalone {
		if opts.InitialControllers, err = standaloneVoter(cfg); err != nil {
			return opts, err
		}
	}
	if !f.noInitial && cfg.IsController() && opts.DynamicQuorum && opts.InitialControllers == nil {
		return opts, errors.New("Because controller.quorum.voters is not set on this controller, you must specify one of the following: " +
			"--standalone, --initial-controllers, or --no-initial-controllers.")
	}
	return opts, nil
}

// standaloneVoter is --standalone's voter set: this node at its first
// advertised controller endpoint ("localhost" when the listener names no
// host) with a fresh directory id. Like Kafka, it goes through the
// --initial-controllers parser, so an unbracketed IPv6 host is refused.
func standaloneVoter(cfg *config.Config) ([]storage.InitialController, error) {
	if !cfg.IsController() {
		return nil, errors.New("You can only use --standalone on a controller.")
	}
	eps := cfg.AdvertisedControllerListeners()
	if len(eps) == 0 {
		return nil, errors.New("No controller listeners found.")
	}
	host := eps[0].Host
	if host == "" {
		host = "localhost"
	}
	return storage.ParseInitialControllers(fmt.Sprintf("%d@%s:%d:%s", cfg.NodeID, host, eps[0].Port, uuid.RandomDirectoryID()))
}

// parseFeatures reads --feature name=level arguments as kafka-storage does.
func parseFeatures(args []string) (map[string]int16, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := map[string]int16{}
	for _, a := range args {
		name, lvl, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("Can't parse feature=level string %s: equals sign not found.", a)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(lvl), 10, 16)
		if err != nil {
			return nil, fmt.Errorf("Can't parse feature=level string %s: unable to parse %s as a short.", a, lvl)
		}
		out[strings.TrimSpace(name)] = int16(n)
	}
	return out, nil
}

// runInfo prints what kafka-storage info prints; exit 1 on problems.
func runInfo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("info", stderr)
	var cf configFlags
	cf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p, err := cf.load()
	if err != nil {
		return err
	}
	// info describes whatever is there, so it reads the dirs without the
	// full validation a running node needs (as kafka-storage does).
	cfg, err := config.New(p, false)
	var dirs []string
	if err != nil {
		dirs = config.RawLogDirs(p)
		if len(dirs) == 0 {
			return err
		}
	} else {
		dirs = append(dirs, cfg.LogDirs...)
		if !slices.Contains(dirs, cfg.MetadataLogDir) {
			dirs = append(dirs, cfg.MetadataLogDir)
		}
	}
	text, err := storage.Info(dirs)
	fmt.Fprint(stdout, text)
	if errors.Is(err, storage.ErrInfoProblems) {
		return exitError{1}
	}
	return err
}

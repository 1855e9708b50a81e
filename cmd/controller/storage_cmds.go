package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftd/kraftd/clusterid"
	"github.com/kraftd/kraftd/config"
)

// runRandomUUID prints one cluster id, as kafka-storage random-uuid does.
func runRandomUUID(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("random-uuid", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, clusterid.Random().String())
	return nil
}

// runFormat formats the configured log dirs as kafka-storage format does.
func runFormat(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("format", stderr)
	var cf configFlags
	cf.register(fs)
	clusterID := fs.StringP("cluster-id", "t", "", "cluster id (22 base64url characters, see random-uuid); required")
	ignore := fs.BoolP("ignore-formatted", "g", false, "skip directories that are already formatted instead of failing")
	release := fs.StringP("release-version", "r", "", "metadata.version to bootstrap (e.g. 3.9-IV0; default "+clusterid.DefaultMetadataVersion.Name+")")
	features := fs.StringArrayP("feature", "f", nil, "feature level name=level (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *clusterID == "" {
		return errors.New("--cluster-id is required (generate one with `controller random-uuid`)")
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
	opts := clusterid.FormatOptions{
		Dirs:            cfg.LogDirs,
		MetadataDir:     cfg.MetadataLogDir,
		ClusterID:       *clusterID,
		NodeID:          cfg.NodeID,
		IgnoreFormatted: *ignore,
		Out:             stdout,
	}
	if *release != "" {
		mv, err := clusterid.LookupMetadataVersion(*release)
		if err != nil {
			return err
		}
		opts.MetadataVersion = mv
	}
	for _, f := range *features {
		name, lvl, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(lvl), 10, 16)
		if !ok || strings.TrimSpace(name) == "" || err != nil {
			return fmt.Errorf("--feature %q: want name=level with an int16 level", f)
		}
		if opts.Features == nil {
			opts.Features = map[string]int16{}
		}
		opts.Features[strings.TrimSpace(name)] = int16(n)
	}
	return clusterid.Format(opts)
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
	text, err := clusterid.Info(dirs)
	fmt.Fprint(stdout, text)
	if errors.Is(err, clusterid.ErrInfoProblems) {
		return exitError{1}
	}
	return err
}

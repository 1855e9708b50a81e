package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/storage"
)

// start reads its configuration as the apache/kafka image's entrypoint
// does (config.FromEnviron): the --config file, then KAFKA_* variables over
// it, then --override; with neither a file nor a variable but CLUSTER_ID
// set it runs config.DefaultProperties, as the image falls back to its
// default server.properties. CLUSTER_ID formats empty log dirs on the first
// start (formatFromEnv).

// startProperties composes start's properties from the flags and environ.
func startProperties(cf configFlags, environ []string) (*config.Properties, error) {
	env, err := config.FromEnviron(environ)
	if err != nil {
		return nil, err
	}
	var file *config.Properties
	if cf.path != "" {
		if file, err = config.LoadProperties(cf.path); err != nil {
			return nil, err
		}
	}
	if file == nil && len(env.Keys) == 0 {
		if lookupEnv(environ, config.ClusterIDEnv) == "" {
			return nil, errors.New("--config FILE is required, or KAFKA_* environment variables as for the apache/kafka image (KAFKA_NODE_ID=1 sets node.id) with CLUSTER_ID")
		}
		file = config.DefaultProperties()
	}
	return config.Compose(file, env, cf.overrides)
}

// lookupEnv returns the last value of name in environ ("" when unset), as
// the JVM's environment map keeps it.
func lookupEnv(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// formatFromEnv formats the log dirs for cluster clusterID as the image
// does on every start (kafka-storage format --cluster-id): a first start
// formats them, a restart finds them formatted for that cluster and goes
// on. Dirs formatted for another cluster are an error. A node whose dirs
// are all formatted is not checked against format's flags, so a dynamic
// quorum formatted by hand (--standalone) restarts under CLUSTER_ID too.
func formatFromEnv(cfg *config.Config, clusterID string, lg *zap.Logger) error {
	if id, err := storage.Load(cfg.LogDirs, cfg.MetadataLogDir, cfg.NodeID); err == nil {
		if id.ClusterID != clusterID {
			return fmt.Errorf("%s=%s, but the log dirs are formatted for cluster %s (meta.properties in %s); use that id or empty dirs",
				config.ClusterIDEnv, clusterID, id.ClusterID, cfg.MetadataLogDir)
		}
		return nil
	}
	// ignore: dirs formatted already (a restart that added a log dir) are
	// kept and only the empty ones formatted.
	f := formatFlags{clusterID: clusterID, ignore: true}
	opts, err := f.options(cfg)
	if err != nil {
		// As in the image, the first start formats a static quorum only
		// (no --standalone or --initial-controllers).
		if strings.Contains(err.Error(), "controller.quorum.voters") {
			return fmt.Errorf("%s: %w (format a dynamic quorum's dirs with `controller format` first: a start finds them formatted)", config.ClusterIDEnv, err)
		}
		return err
	}
	var out bytes.Buffer
	opts.Out = &out
	if err := storage.Format(opts); err != nil {
		return fmt.Errorf("%s: %w", config.ClusterIDEnv, err)
	}
	lg.Info("formatted the log dirs from "+config.ClusterIDEnv, zap.String("cluster_id", clusterID),
		zap.Strings("output", strings.Split(strings.TrimSpace(out.String()), "\n")))
	return nil
}

package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/kraftd/kraftd/topics"
)

// Server is a Kafka 4.4.0 server the harness formatted and started on 127.0.0.1:
// kafka.Kafka as a controller or as a broker.
type Server struct {
	*Process
	NodeID       int32
	ClusterID    string
	Port         int
	Addr         string // 127.0.0.1:port: the controller listener, or the broker's PLAINTEXT one
	LogDir       string // log.dirs (also the metadata log dir)
	PartitionDir string // LogDir/__cluster_metadata-0, the server's copy of the metadata log
	ConfigPath   string // the generated server properties
}

// serverSpec is what formatting and starting a server takes, whatever its role.
type serverSpec struct {
	role       string // "controller" or "broker": the process's and files' names
	nodeID     int32
	clusterID  string
	port       int
	dir        string // log dir; work/data when empty
	props      func(dir string) Props
	noFormat   bool
	formatArgs []string
	log4j      map[string]string
	jvmFlags   []string
}

// prepareServers writes each spec's server properties under its own fresh work dir and
// formats its log dir (unless noFormat), all at once: each format is a JVM taking
// seconds. It returns the servers, not started, and kafka-storage's output for each.
func (e *Env) prepareServers(t testing.TB, specs []serverSpec) ([]*Server, []string, error) {
	t.Helper()
	servers := make([]*Server, len(specs))
	outs := make([]string, len(specs))
	errs := make([]error, len(specs))
	works := make([]string, len(specs))
	for i := range specs {
		works[i] = t.TempDir()
	}
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() { servers[i], outs[i], errs[i] = e.prepareServer(s, works[i]) })
	}
	wg.Wait()
	return servers, outs, errors.Join(errs...)
}

func (e *Env) prepareServer(s serverSpec, work string) (*Server, string, error) {
	dir := s.dir
	if dir == "" {
		dir = filepath.Join(work, "data")
	}
	srv := &Server{
		NodeID: s.nodeID, ClusterID: s.clusterID, Port: s.port,
		Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		LogDir: dir, PartitionDir: topics.PartitionDir(dir, topics.ClusterMetadata),
		ConfigPath: filepath.Join(work, s.role+".properties"),
	}
	if err := s.props(dir).WriteFile(srv.ConfigPath); err != nil {
		return nil, "", err
	}
	if s.noFormat {
		return srv, "", nil
	}
	out, err := e.StorageFormat(context.Background(), srv.ConfigPath, s.clusterID, s.formatArgs...)
	if err != nil {
		return nil, out, fmt.Errorf("kafkatest: format %s %d: %w\n%s", s.role, s.nodeID, err, out)
	}
	return srv, out, nil
}

// launch starts the prepared server's JVM.
func (e *Env) launch(t testing.TB, srv *Server, s serverSpec) error {
	t.Helper()
	work := filepath.Dir(srv.ConfigPath)
	log4j, err := e.serverLog4jFile(work, s.log4j)
	if err != nil {
		return err
	}
	srv.Process, err = e.startJVM(t, fmt.Sprintf("kafka-%s-%d", s.role, s.nodeID), work, s.jvmFlags, log4j, ClassKafka, srv.ConfigPath)
	return err
}

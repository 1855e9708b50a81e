package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// dockerWrapper runs the apache/kafka image's entrypoint (Kafka 4.4's
// kafka.docker.KafkaDockerWrapper setup) with exactly environ: it writes
// the final server.properties into work/final from work/mounted and the
// environment, then formats the log dirs from CLUSTER_ID. It returns the
// combined output and the exit error.
func dockerWrapper(ctx context.Context, env *kafkatest.Env, work string, environ []string) (string, error) {
	for _, d := range []string{"defaults", "mounted", "final"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, env.Java, "-cp", env.Classpath(), "kafka.docker.KafkaDockerWrapper", "setup",
		"--default-configs-dir", filepath.Join(work, "defaults"),
		"--mounted-configs-dir", filepath.Join(work, "mounted"),
		"--final-configs-dir", filepath.Join(work, "final"))
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestImageEnvironmentAsKafka: the same environment variables and mounted
// server.properties give Kafka 4.4's image entrypoint and kraftd's
// config.FromEnviron/Compose the same properties (names with ___ and __,
// excluded JVM variables, escapes, a variable over a file key); a dir the
// image formatted from CLUSTER_ID is taken by kraftd's start with the same
// CLUSTER_ID, and both refuse another cluster id.
func TestImageEnvironmentAsKafka(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	work := t.TempDir()
	data := filepath.Join(work, "data")
	port := kafkatest.FreePort(t)
	clusterID := kafkatest.NewUUID()
	mounted := "process.roles=controller\nnode.id=9\ncontroller.listener.names=CONTROLLER\n"
	if err := os.MkdirAll(filepath.Join(work, "mounted"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "mounted", "server.properties"), []byte(mounted), 0o644); err != nil {
		t.Fatal(err)
	}
	environ := []string{
		"PATH=" + os.Getenv("PATH"),
		"KAFKA_NODE_ID=1",
		"KAFKA_CONTROLLER_QUORUM_VOTERS=" + fmt.Sprintf("1@127.0.0.1:%d", port),
		fmt.Sprintf("KAFKA_LISTENERS=CONTROLLER://127.0.0.1:%d", port),
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=CONTROLLER:PLAINTEXT",
		"KAFKA_LOG_DIRS=" + data,
		"KAFKA_CONTROLLER_QUORUM_ELECTION_TIMEOUT_MS=500",
		`KAFKA_LISTENER_NAME_SASL___SSL_PLAIN_SASL__JAAS__CONFIG=x\u0041\\y`,
		"KAFKA_KAFKA_X=1",
		"KAFKA_HEAP_OPTS=-Xmx1G",
		"KAFKA_JMX_HOSTNAME=h",
		"CLUSTER_ID=" + clusterID,
	}
	out, err := dockerWrapper(ctx, env, work, environ)
	if err != nil {
		t.Fatalf("image entrypoint: %v\n%s", err, out)
	}
	kafkaProps, err := config.LoadProperties(filepath.Join(work, "final", "server.properties"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := config.ParseProperties(mounted)
	if err != nil {
		t.Fatal(err)
	}
	fromEnv, err := config.FromEnviron(environ)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := config.Compose(file, fromEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ours.Values, kafkaProps.Values) {
		t.Fatalf("properties differ:\nimage: %v\nkraftd: %v", kafkaProps.Values, ours.Values)
	}
	mp, err := storage.ReadMetaProperties(data)
	if err != nil || mp.ClusterID != clusterID || mp.NodeID != 1 {
		t.Fatalf("the image formatted %+v, %v; want cluster %s node 1", mp, err, clusterID)
	}

	// The image tolerates a formatted dir ("already formatted") and fails
	// on another cluster's; kraftd's start does the same.
	if out, err := dockerWrapper(ctx, env, work, environ); err == nil || !strings.Contains(out, "already formatted") {
		t.Fatalf("image entrypoint on its formatted dir: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(work, "mounted", "server.properties")
	bin := kafkatest.BuildKraftd(t)
	if out := runKraftdStart(t, bin, cfgPath, environ, true); !strings.Contains(out, "Leader(epoch") {
		t.Fatalf("kraftd start on the image's dir did not lead:\n%s", out)
	}
	other := append(append([]string(nil), environ...), "CLUSTER_ID="+kafkatest.NewUUID())
	if out, err := dockerWrapper(ctx, env, work, other); err == nil || strings.Contains(out, "already formatted") {
		t.Fatalf("image entrypoint with another CLUSTER_ID: %v\n%s", err, out)
	}
	if out := runKraftdStart(t, bin, cfgPath, other, false); !strings.Contains(out, "formatted for cluster "+clusterID) {
		t.Fatalf("kraftd start with another CLUSTER_ID:\n%s", out)
	}
}

// runKraftdStart runs `controller start --config cfg` with environ. With
// lead it waits until the single node leads (at most 30 s) and stops it
// with SIGTERM; otherwise it expects the start to fail. It returns the log.
func runKraftdStart(t *testing.T, bin, cfg string, environ []string, lead bool) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "kraftd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "start", "--config", cfg)
	cmd.Env, cmd.Stdout, cmd.Stderr = environ, logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	read := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-done:
			if !lead && err == nil {
				t.Fatal("kraftd start exited 0")
			}
			return read()
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("kraftd start: still running after 30 s (lead %v):\n%s", lead, read())
		case <-time.After(100 * time.Millisecond):
			if lead && strings.Contains(read(), "Leader(epoch") {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-done
				return read()
			}
		}
	}
}

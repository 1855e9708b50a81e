package interop

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

func runController(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("controller %s: %w\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// TestControllerStorageCommandsWithKafka: the same properties file drives kraftd's
// `controller format` / `controller info` and Kafka's storage tool, and each side accepts
// the other's formatted dir.
func TestControllerStorageCommandsWithKafka(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	bin := kafkatest.BuildKraftd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	setup := func(name string) (config, dir string) {
		work := filepath.Join(t.TempDir(), name)
		dir = filepath.Join(work, "data")
		config = filepath.Join(t.TempDir(), name+".properties")
		cfg := kafkatest.ControllerConfig{NodeID: 1, Port: kafkatest.FreePort(t)}
		if err := kafkatest.ControllerProps(cfg, dir).WriteFile(config); err != nil {
			t.Fatal(err)
		}
		return config, dir
	}

	t.Run("KraftdFormatKafkaInfo", func(t *testing.T) {
		config, dir := setup("kraftd")
		id := kafkatest.NewUUID()
		out, err := runController(t, bin, "format", "-c", config, "-t", id)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "Formatting metadata directory "+dir) {
			t.Errorf("controller format printed %q", out)
		}
		info, err := env.StorageInfo(ctx, config)
		if err != nil {
			t.Fatalf("kafka-storage info rejects kraftd's dir: %v", err)
		}
		ours, err := runController(t, bin, "info", "-c", config)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(info, "cluster.id="+id) || !strings.Contains(info, "node.id=1") || strings.Contains(info, "problem") {
			t.Errorf("kafka-storage info:\n%s", info)
		}
		if ours != info {
			t.Errorf("info texts differ on kraftd's dir:\nkafka-storage info:\n%q\ncontroller info:\n%q", info, ours)
		}
	})

	t.Run("KafkaFormatKraftdInfo", func(t *testing.T) {
		config, _ := setup("kafka")
		id := kafkatest.NewUUID()
		if _, err := env.StorageFormat(ctx, config, id); err != nil {
			t.Fatal(err)
		}
		info, err := env.StorageInfo(ctx, config)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := runController(t, bin, "info", "-c", config)
		if err != nil {
			t.Fatalf("controller info rejects Kafka's dir: %v", err)
		}
		if ours != info {
			t.Errorf("info texts differ on Kafka's dir:\nkafka-storage info:\n%q\ncontroller info:\n%q", info, ours)
		}
		// kraftd refuses to format it again, as Kafka does.
		if out, err := runController(t, bin, "format", "-c", config, "-t", id); err == nil || !strings.Contains(err.Error(), "already formatted") {
			t.Errorf("controller format on Kafka's formatted dir: %v (%s)", err, out)
		}
	})
}

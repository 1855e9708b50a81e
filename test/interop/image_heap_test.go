//go:build interopbench

package interop

import (
	"strings"
	"testing"
)

// TestKafkaImageHeap prints the heap Kafka 4.4.0's MetadataImage takes per
// partition for the synthetic cluster of kraftd's BenchmarkImage (go test
// -run '^$' -bench Image ./image/ prints kraftd's), the JVM figure of
// docs/design/image.md. A measurement, built with -tags interopbench:
//
//	cd test && go test -tags interopbench -run TestKafkaImageHeap -v ./interop/
func TestKafkaImageHeap(t *testing.T) {
	prog := javaProgram(t, "KafkaImageHeap")
	for _, n := range []string{"100000", "1000000"} {
		cmd := prog(n)
		cmd.Args = append(cmd.Args[:1], append([]string{"-Xmx8g"}, cmd.Args[1:]...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("KafkaImageHeap %s: %v\n%s", n, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "partitions=") {
				t.Log(line)
			}
		}
	}
}

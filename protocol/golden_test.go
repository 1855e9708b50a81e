package protocol

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goldenFrame is one frame captured from Kafka's JVM raft (testdata/kafka-jvm-raft/frames).
type goldenFrame struct {
	file    string
	key     int16
	version int16
	request bool
	corr    int32
	frame   []byte
}

const goldenDir = "../testdata/kafka-jvm-raft/frames"

func loadGoldenFrames(tb testing.TB) []goldenFrame {
	tb.Helper()
	f, err := os.Open(filepath.Join(goldenDir, "index.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var frames []goldenFrame
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 7 {
			tb.Fatalf("index.tsv: short line %q", line)
		}
		key, _ := strconv.Atoi(cols[1])
		ver, _ := strconv.Atoi(cols[3])
		corr, _ := strconv.Atoi(cols[5])
		size, _ := strconv.Atoi(cols[6])
		data, err := os.ReadFile(filepath.Join(goldenDir, cols[0]))
		if err != nil {
			tb.Fatal(err)
		}
		if len(data) != size {
			tb.Fatalf("%s: %d bytes, index says %d", cols[0], len(data), size)
		}
		frames = append(frames, goldenFrame{
			file: cols[0], key: int16(key), version: int16(ver),
			request: cols[4] == "request", corr: int32(corr), frame: data,
		})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(frames) < 20 {
		tb.Fatalf("only %d golden frames", len(frames))
	}
	return frames
}

// TestGoldenFrames decodes every captured frame and re-encodes it to the same bytes.
func TestGoldenFrames(t *testing.T) {
	for _, g := range loadGoldenFrames(t) {
		t.Run(g.file, func(t *testing.T) {
			if g.request {
				hdr, req, err := testApis.ParseRequest(g.frame)
				if err != nil {
					t.Fatalf("ParseRequest: %v", err)
				}
				if hdr.APIKey != g.key || hdr.APIVersion != g.version || hdr.CorrelationID != g.corr {
					t.Fatalf("header %+v, want key %d v%d corr %d", hdr, g.key, g.version, g.corr)
				}
				out := AppendRequest(nil, hdr.CorrelationID, hdr.ClientID, req)
				if !bytes.Equal(out[4:], g.frame) {
					t.Fatalf("re-encoded request differs:\n got %x\nwant %x", out[4:], g.frame)
				}
				if int(uint32(out[0])<<24|uint32(out[1])<<16|uint32(out[2])<<8|uint32(out[3])) != len(g.frame) {
					t.Fatalf("size prefix %x for %d bytes", out[:4], len(g.frame))
				}
				return
			}
			corr, err := ResponseCorrelationID(g.frame)
			if err != nil || corr != g.corr {
				t.Fatalf("ResponseCorrelationID = %d, %v; want %d", corr, err, g.corr)
			}
			resp, err := ParseResponse(g.frame, g.key, g.version)
			if err != nil {
				t.Fatalf("ParseResponse: %v", err)
			}
			out := AppendResponse(nil, corr, resp)
			if !bytes.Equal(out[4:], g.frame) {
				t.Fatalf("re-encoded response differs:\n got %x\nwant %x", out[4:], g.frame)
			}
		})
	}
}

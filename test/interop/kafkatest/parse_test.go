package kafkatest

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"
)

// Output captured from Kafka 4.4.0's tools.
const dumpOut = `Dumping data/__cluster_metadata-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1796041240744 size: 91 magic: 2 compresscodec: none crc: 3926258209 isvalid: true
| offset: 0 CreateTime: 1796041240744 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}
baseOffset: 1 lastOffset: 2 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 91 CreateTime: 1796041241080 size: 330 magic: 2 compresscodec: none crc: 4081341619 isvalid: true
| offset: 1 CreateTime: 1796041241080 keySize: -1 valueSize: 24 sequence: -1 headerKeys: [] payload: {"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"Bootstrap records"}}
| offset: 2 CreateTime: 1796041241080 keySize: -1 valueSize: 23 sequence: -1 headerKeys: [] payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":33}}
Dumping data/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint
Snapshot end offset: 0, epoch: 0
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1796041236056 size: 83 magic: 2 compresscodec: none crc: 3489156211 isvalid: true
| offset: 0 CreateTime: 1796041236056 keySize: 4 valueSize: 11 sequence: -1 headerKeys: [] SnapshotHeader {"version":0,"lastContainedLogTimestamp":1796041236036}
`

func TestParseDumpLog(t *testing.T) {
	files, err := ParseDumpLog(dumpOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("got %d files, want 2", len(files))
	}
	seg, snap := files[0], files[1]
	if seg.Path != "data/__cluster_metadata-0/00000000000000000000.log" || len(seg.Header) != 1 || seg.Header[0] != "Log starting offset: 0" {
		t.Errorf("segment file %q header %q", seg.Path, seg.Header)
	}
	if len(seg.Batches) != 2 || len(seg.Batches[0].Records) != 1 || len(seg.Batches[1].Records) != 2 {
		t.Fatalf("segment batches: %+v", seg.Batches)
	}
	b := seg.Batches[1]
	if off, err := b.Int("baseOffset"); err != nil || off != 1 {
		t.Errorf("baseOffset %d %v", off, err)
	}
	if b.Fields["crc"] != "4081341619" || b.Fields["isControl"] != "false" || b.Fields["deleteHorizonMs"] != "OptionalLong.empty" {
		t.Errorf("batch fields %v", b.Fields)
	}
	r := b.Records[0]
	if r.Fields["offset"] != "1" || r.Fields["valueSize"] != "24" || r.Fields["headerKeys"] != "[]" ||
		r.Rest != `payload: {"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"Bootstrap records"}}` {
		t.Errorf("record %+v", r)
	}
	if lc := seg.Batches[0].Records[0].Rest; !strings.HasPrefix(lc, "LeaderChange: {") {
		t.Errorf("control record rest %q", lc)
	}
	if len(snap.Header) != 1 || snap.Header[0] != "Snapshot end offset: 0, epoch: 0" || len(snap.Batches) != 1 ||
		!strings.HasPrefix(snap.Batches[0].Records[0].Rest, "SnapshotHeader {") {
		t.Errorf("snapshot %+v", snap)
	}
	if _, err := ParseDumpLog("Dumping x\nbaseOffset: 0 lastOffset\n"); err == nil {
		t.Error("truncated batch line parsed without error")
	}
	if _, err := ParseDumpLog("Dumping x\n| offset: 0 headerKeys: [] payload: 1\n"); err == nil {
		t.Error("record line before any batch parsed without error")
	}
}

func TestParseQuorumOutput(t *testing.T) {
	st, err := ParseStatus(`ClusterId:              K1d7x1zzS3a90hU0M0x8fA
LeaderId:               1
LeaderEpoch:            1
HighWatermark:          23
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          [{"id": 1, "endpoints": ["CONTROLLER://127.0.0.1:29093"]}]
CurrentObservers:       []
`)
	if err != nil {
		t.Fatal(err)
	}
	if st["ClusterId"] != "K1d7x1zzS3a90hU0M0x8fA" || st["HighWatermark"] != "23" ||
		st["CurrentVoters"] != `[{"id": 1, "endpoints": ["CONTROLLER://127.0.0.1:29093"]}]` {
		t.Errorf("status %v", st)
	}
	if _, err := ParseStatus("LeaderId: 1\n"); err == nil {
		t.Error("status without ClusterId parsed")
	}
	rows, err := ParseReplication("NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus\t\n" +
		"1     \tAAAAAAAAAAAAAAAAAAAAAA\t25          \t0  \t1796041248571     \t1796041248571        \tLeader\t\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["NodeId"] != "1" || rows[0]["LogEndOffset"] != "25" || rows[0]["Status"] != "Leader" {
		t.Errorf("rows %v", rows)
	}
	if _, err := ParseReplication("NodeId\tStatus\n1\n"); err == nil {
		t.Error("short row parsed")
	}
}

func TestNewUUID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		s := NewUUID()
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != 16 || len(s) != 22 || s[0] == '-' || b[6]>>4 != 4 || seen[s] {
			t.Fatalf("bad uuid %q (%v)", s, err)
		}
		seen[s] = true
	}
}

func TestPropsEncode(t *testing.T) {
	s, err := Props{"b": "2", "a": "x,y"}.Encode()
	if err != nil || s != "a=x,y\nb=2\n" {
		t.Errorf("Encode = %q, %v", s, err)
	}
	if _, err := (Props{"a b": "1"}).Encode(); err == nil {
		t.Error("key with a space encoded")
	}
	if _, err := (Props{"a": "1\n2"}).Encode(); err == nil {
		t.Error("value with a newline encoded")
	}
}

func TestParseProcUsage(t *testing.T) {
	stat := []byte("4242 (java (main)) S 1 4242 4242 0 -1 4194560 12000 0 0 0 250 75 0 0 20 0 40 0 100 3000000000 50000 18446744073709551615")
	status := []byte("Name:\tjava\nVmPeak:\t 3000000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
	u, err := parseProcUsage(stat, status)
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU != 3250*time.Millisecond || u.PeakRSS != 200<<20 || u.RSS != 100<<20 {
		t.Errorf("usage %+v", u)
	}
	if _, err := parseProcUsage([]byte("4242 (java) S 1"), status); err == nil {
		t.Error("short stat parsed")
	}
	if _, err := parseProcUsage(stat, []byte("VmHWM:\t12 MB\n")); err == nil {
		t.Error("VmHWM in MB parsed")
	}
	self, err := procUsage(os.Getpid())
	if err != nil || self.PeakRSS <= 0 || self.RSS <= 0 {
		t.Errorf("own usage %+v %v", self, err)
	}
}

func TestParseRaftThroughput(t *testing.T) {
	out := "[x] INFO starting\nThroughput (bytes/second): 35779.18, Latency (ms): 22.0 p75 35.0 p99 56.0 p999\nnoise\n" +
		"Throughput (bytes/second): 63458.92, Latency (ms): 21.0 p75 30.0 p99 51.0 p999\n"
	r := ParseRaftThroughput(out)
	want := []RaftThroughput{{35779.18, 22, 35, 56}, {63458.92, 21, 30, 51}}
	if len(r) != 2 || r[0] != want[0] || r[1] != want[1] {
		t.Errorf("got %+v", r)
	}
	if len(ParseRaftThroughput("Throughput (bytes/second): x")) != 0 {
		t.Error("garbage parsed")
	}
}

func TestFreePorts(t *testing.T) {
	ports := FreePorts(t, 5)
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
}

func TestLastJVMHighWatermark(t *testing.T) {
	out := "[x] INFO [RaftManager id=1] High watermark set to LogOffsetMetadata(offset=1, metadata=Optional.empty) for the first time for epoch 1\n" +
		"[x] DEBUG [RaftManager id=1] High watermark set to LogOffsetMetadata(offset=4211, metadata=Optional[(segmentBaseOffset=0,relativePositionInSegment=91)]) from LogOffsetMetadata(offset=4100, metadata=Optional.empty)\n"
	if got := lastJVMHighWatermark(out); got != 4211 {
		t.Errorf("last high watermark %d, want 4211", got)
	}
	// An update cut mid-offset (still being written) yields the one before it.
	if got := lastJVMHighWatermark(out + "[x] DEBUG [RaftManager id=1] High watermark set to LogOffsetMetadata(offset=43"); got != 4211 {
		t.Errorf("with a partial line: %d, want 4211", got)
	}
	if got := lastJVMHighWatermark("[x] INFO starting\n"); got != -1 {
		t.Errorf("no update: %d, want -1", got)
	}
}

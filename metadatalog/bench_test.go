package metadatalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kraftd/kraftd/protocol"
)

// Benchmarks (make bench runs them all):
//
//	go test -run '^$' -bench 'Append|RawWrite' -benchtime 3000x ./metadatalog
//	go test -run '^$' -bench SequentialRead ./metadatalog          (1 GiB; 64 MiB with -short)
//	KRAFTD_BENCH_RECOVERY_BYTES=1073741824 go test -run '^$' -bench Recovery ./metadatalog
//
// Every file lives in b.TempDir() and is removed afterwards.

const benchRecordBytes = 256

func benchBatch(records int) []byte {
	return mkBatch(0, 1, records, benchRecordBytes)
}

// BenchmarkAppendFsync appends one batch per call and flushes after each:
// the leader path with one fsync per append round.
func BenchmarkAppendFsync(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchAppend(b, n, 0)
		})
	}
}

// BenchmarkAppendDeferredFlush appends one batch per call and flushes at
// most once per millisecond (raft deferring flushes across appends).
func BenchmarkAppendDeferredFlush(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchAppend(b, n, time.Millisecond)
		})
	}
}

// BenchmarkAppendNoFlush isolates the append path's own cost (validation,
// CRC, index, write syscall) from fsync; compare with BenchmarkRawWrite.
func BenchmarkAppendNoFlush(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchAppend(b, n, -1)
		})
	}
}

// flushEvery: 0 = flush after every append, < 0 = never (until the end).
func benchAppend(b *testing.B, records int, flushEvery time.Duration) {
	l, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := benchBatch(records)
	b.SetBytes(int64(records * benchRecordBytes))
	b.ResetTimer()
	last := time.Now()
	off := int64(0)
	for i := 0; i < b.N; i++ {
		protocol.SetBaseOffset(batch, off)
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
		off += int64(records)
		if flushEvery == 0 || (flushEvery > 0 && time.Since(last) >= flushEvery) {
			if err := l.Flush(); err != nil {
				b.Fatal(err)
			}
			last = time.Now()
		}
	}
	b.StopTimer()
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkRawWrite is the baseline of BenchmarkAppendNoFlush: one plain
// write per call.
func BenchmarkRawWrite(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchRaw(b, n, false)
		})
	}
}

// BenchmarkRawWriteFsync is the baseline: the same bytes written to a plain
// file with one write and one fsync per call.
func BenchmarkRawWriteFsync(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchRaw(b, n, true)
		})
	}
}

func benchRaw(b *testing.B, records int, fsync bool) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	batch := benchBatch(records)
	b.SetBytes(int64(records * benchRecordBytes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(batch); err != nil {
			b.Fatal(err)
		}
		if fsync {
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}

// buildBenchLog writes about size bytes of 100-record batches (no fsync;
// the page cache holds them) and returns the open log.
func buildBenchLog(b *testing.B, dir string, size int64) *Log {
	b.Helper()
	l, err := Open(Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	const perCall = 64
	one := benchBatch(100)
	buf := make([]byte, 0, perCall*len(one))
	for i := 0; i < perCall; i++ {
		buf = append(buf, one...)
	}
	off := int64(0)
	for l.Size() < size {
		for i := 0; i < perCall; i++ {
			protocol.SetBaseOffset(buf[i*len(one):], off)
			off += 100
		}
		if _, err := l.Append(buf); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

func benchSize(b *testing.B, env string, def, short int64) int64 {
	if s := os.Getenv(env); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want a byte count", env, s)
		}
		return n
	}
	if testing.Short() {
		return short
	}
	return def
}

// BenchmarkSequentialRead reads the whole log from the page cache with 8 MiB
// reads (raft's fetch size), as a follower catching up would. Target >= 1 GB/s.
func BenchmarkSequentialRead(b *testing.B) {
	size := benchSize(b, "KRAFTD_BENCH_READ_BYTES", 1<<30, 64<<20)
	l := buildBenchLog(b, b.TempDir(), size)
	defer l.Close()
	b.Run(fmt.Sprintf("bytes=%d", l.Size()), func(b *testing.B) {
		b.SetBytes(l.Size())
		for i := 0; i < b.N; i++ {
			for off := l.StartOffset(); off < l.EndOffset().Offset; {
				data, err := l.Read(off, 8<<20)
				if err != nil {
					b.Fatal(err)
				}
				// Advance to the end of the last batch returned.
				var h miniHeader
				for p := 0; p < len(data); p += h.size {
					h = parseMini(data[p:])
				}
				off = h.next
			}
		}
	})
}

// BenchmarkRecovery times Open of a log of the given size: every batch of
// every segment is CRC-checked. 128 MiB by default (16 MiB with -short);
// KRAFTD_BENCH_RECOVERY_BYTES=1073741824 for 1 GiB.
func BenchmarkRecovery(b *testing.B) {
	size := benchSize(b, "KRAFTD_BENCH_RECOVERY_BYTES", 128<<20, 16<<20)
	dir := b.TempDir()
	l := buildBenchLog(b, dir, size)
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	total := l.Size()
	l.Close()
	b.Run(fmt.Sprintf("bytes=%d", total), func(b *testing.B) {
		b.SetBytes(total)
		for i := 0; i < b.N; i++ {
			l, err := Open(Options{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			if l.Size() != total {
				b.Fatalf("recovered %d bytes of %d", l.Size(), total)
			}
			l.Close()
		}
	})
}

// BenchmarkAppendVsRaw alternates, in one loop, a kraftd Append+Flush and a
// raw write+fsync of the same bytes to a plain file in the same directory,
// so both see the same disk at the same moment. It reports both latencies
// and kraftd's overhead in percent (goal: < 10%).
func BenchmarkAppendVsRaw(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			l, err := Open(Options{Dir: filepath.Join(dir, "log")})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			f, err := os.Create(filepath.Join(dir, "raw"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			batch := benchBatch(n)
			var kraftd, raw time.Duration
			off := int64(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				protocol.SetBaseOffset(batch, off)
				if _, err := l.Append(batch); err != nil {
					b.Fatal(err)
				}
				if err := l.Flush(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := f.Write(batch); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				kraftd += t1.Sub(t0)
				raw += t2.Sub(t1)
				off += int64(n)
			}
			b.StopTimer()
			b.ReportMetric(float64(kraftd.Nanoseconds())/float64(b.N), "kraftd-ns/append")
			b.ReportMetric(float64(raw.Nanoseconds())/float64(b.N), "raw-ns/write")
			b.ReportMetric(100*(float64(kraftd)-float64(raw))/float64(raw), "overhead-%")
		})
	}
}

package metadatalog

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/vfs"
)

// A segment leaves the log by discard. Unlinking a large file is slow (a
// 1 GiB segment takes about 0.2 s on ext4) and the raft loop owns the log,
// so with Options.BackgroundDelete a segment is renamed to *.deleted (one
// directory entry: fast, and made durable by the caller's directory fsync)
// and unlinked on the discarder's goroutine, as Kafka deletes *.deleted
// files on a scheduler thread. A crash before the unlink leaves the
// *.deleted file, which the next Open removes (isLeftover).
//
// The discarder also paces the release of a file's blocks, as RocksDB's
// DeleteScheduler and pebble's deletion pacer do: it cuts the file from its
// end discardChunk at a time, discardPause apart, before the unlink. Freeing
// 1 GiB at once (the unlink of a full segment) holds a discard-mounted
// device for ~2 s: on an ext4 volume mounted with -o discard (a virtio
// disk), other writers' fsyncs took 80-105 ms meanwhile, and under 5 ms
// with 8 MiB steps 25 ms apart. At 320 MiB/s a segment still goes far faster
// than any log fills one.
const (
	discardChunk = 8 << 20
	discardPause = 25 * time.Millisecond
)

// discardQueue bounds the files waiting for the goroutine; past it discard
// unlinks in the caller, so memory stays bounded by construction.
const discardQueue = 64

// discard takes the closed segment file at path out of the log directory.
func (l *Log) discard(path string) error {
	if l.discarder == nil {
		if err := l.fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete segment %s: %w", path, err)
		}
		return nil
	}
	del := path + ".deleted"
	if err := l.fs.Rename(path, del); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("delete segment %s: %w", path, err)
	}
	l.discarder.add(del)
	return nil
}

// discarder unlinks *.deleted files on a goroutine of its own.
type discarder struct {
	fs     vfs.FS
	logger *zap.Logger
	queue  chan string
	// stop ends the pacing: close unlinks what is left at once.
	stop  chan struct{}
	done  sync.WaitGroup
	chunk int64         // discardChunk; tests shrink it
	pause time.Duration // discardPause
}

func newDiscarder(fs vfs.FS, logger *zap.Logger) *discarder {
	d := &discarder{fs: fs, logger: logger, queue: make(chan string, discardQueue), stop: make(chan struct{}),
		chunk: discardChunk, pause: discardPause}
	d.done.Add(1)
	go func() {
		defer d.done.Done()
		for p := range d.queue {
			d.shrink(p)
			d.remove(p)
		}
	}()
	return d
}

func (d *discarder) add(p string) {
	select {
	case d.queue <- p:
	default:
		d.remove(p)
	}
}

// shrink cuts p from its end, chunk bytes every pause, until it is at most
// one chunk long or the log closes. Failures are left to the unlink.
func (d *discarder) shrink(p string) {
	f, err := d.fs.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for size := fi.Size() - d.chunk; size > 0; size -= d.chunk {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		if f.Truncate(size) != nil {
			return
		}
		t.Reset(d.pause)
	}
	select { // the last chunk goes with the unlink
	case <-d.stop:
	case <-t.C:
	}
}

// remove unlinks p. A failure loses nothing (the file is out of the log) and
// the next Open retries, so it is logged, not returned.
func (d *discarder) remove(p string) {
	if err := d.fs.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.logger.Warn("could not remove a deleted segment; the next start removes it", zap.String("file", p), zap.Error(err))
	}
}

// close unlinks the queued files, without pacing, and waits for them.
func (d *discarder) close() {
	close(d.stop)
	close(d.queue)
	d.done.Wait()
}

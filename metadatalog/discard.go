package metadatalog

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/metadatalog/vfs"
)

// A segment leaves the log by discard. Unlinking a large file is slow (a
// 1 GiB segment takes about 0.2 s on ext4) and the raft loop owns the log,
// so with Options.BackgroundDelete a segment is renamed to *.deleted (one
// directory entry: fast, and made durable by the caller's directory fsync)
// and unlinked on the discarder's goroutine, as Kafka deletes *.deleted
// files on a scheduler thread. A crash before the unlink leaves the
// *.deleted file, which the next Open removes (isLeftover).

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
	done   sync.WaitGroup
}

func newDiscarder(fs vfs.FS, logger *zap.Logger) *discarder {
	d := &discarder{fs: fs, logger: logger, queue: make(chan string, discardQueue)}
	d.done.Add(1)
	go func() {
		defer d.done.Done()
		for p := range d.queue {
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

// remove unlinks p. A failure loses nothing (the file is out of the log) and
// the next Open retries, so it is logged, not returned.
func (d *discarder) remove(p string) {
	if err := d.fs.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.logger.Warn("could not remove a deleted segment; the next start removes it", zap.String("file", p), zap.Error(err))
	}
}

// close waits for the queued files to be unlinked.
func (d *discarder) close() {
	close(d.queue)
	d.done.Wait()
}

package image

import (
	"errors"
	"fmt"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// Loader keeps an image current with what raft commits (Kafka's
// MetadataLoader and the controller's OffsetControlManager): it replays
// committed batches and snapshots, handles metadata transactions (KIP-868),
// and publishes an image at each batch end outside a transaction.
//
// Transactions: records between a BeginTransactionRecord and its
// EndTransactionRecord are replayed but not published until the End; an
// AbortTransactionRecord reverts to the image before the Begin (its offset
// moves on). A Begin inside an open transaction, an End or Abort outside
// one, and any of the three inside a snapshot fail. Only whole batches are
// published, so a Begin in the middle of a batch holds back the records
// before it too (Kafka publishes those at the Begin; its controllers only
// ever begin a transaction in a batch of its own).
//
// A replay failure is fatal, as it is for a Kafka controller: the Loader
// keeps its last published image, returns the error, and refuses further
// input with it.
//
// The bootstrap snapshot (id 0-0, written by format) is not image state: its
// records are kept apart (Bootstrap) for the controller's activation.
//
// Not safe for concurrent use; the images it publishes are.
type Loader struct {
	opts    Options
	pub     *Image   // the last published image
	b       *Builder // the records replayed so far, published or not
	txStart int64    // offset of the open transaction's Begin; -1 when none
	preTx   *Image   // the image as it was before the open transaction
	boot    []metadata.Record
	bootV   []int16 // the versions of boot
	err     error
}

// NewLoader returns a loader at the empty image.
func NewLoader(opts Options) *Loader {
	return &Loader{opts: opts, pub: Empty(), b: NewBuilder(Empty(), opts), txStart: -1}
}

// Image returns the last published image.
func (l *Loader) Image() *Image { return l.pub }

// Transaction returns the offset of the open transaction's
// BeginTransactionRecord; false when none is open. A controller becoming
// active aborts it (Kafka's activation writes an AbortTransactionRecord).
func (l *Loader) Transaction() (int64, bool) { return l.txStart, l.txStart >= 0 }

// Bootstrap returns the records of the bootstrap snapshot (0-0), false if
// none was loaded.
func (l *Loader) Bootstrap() ([]metadata.Record, bool) { return l.boot, l.boot != nil }

// BootstrapVersions returns the versions the bootstrap records were read
// at, one per record of Bootstrap: an activating controller writes them as
// the file holds them.
func (l *Loader) BootstrapVersions() []int16 { return l.bootV }

// Err returns the failure that stopped the loader, nil while it runs.
func (l *Loader) Err() error { return l.err }

// Clone returns an independent loader in the same state, in O(1): a
// controller's working state (its own uncommitted records on top of the
// committed ones) starts as a clone of the committed loader, and starts
// again from one when it stops leading.
func (l *Loader) Clone() *Loader {
	c := *l
	c.b = NewBuilder(l.b.Image(), l.opts)
	return &c
}

// HandleCommit replays one committed batch. A control batch only moves the
// offset (its records are raft's).
func (l *Loader) HandleCommit(b raft.CommittedBatch) error {
	if l.err != nil {
		return l.err
	}
	if b.Control {
		return l.replayBatch(b.BaseOffset, b.LastOffset, b.Epoch, nil)
	}
	recs := make([]decoded, len(b.Records))
	for i, v := range b.Records {
		rec, version, err := metadata.Decode(v)
		if err != nil {
			return l.fail(fmt.Errorf("image: record at offset %d: %w", b.BaseOffset+int64(i), err))
		}
		recs[i] = decoded{rec, version}
	}
	return l.replayBatch(b.BaseOffset, b.LastOffset, b.Epoch, recs)
}

// Replay replays records the caller already holds decoded, as one batch
// whose first record has offset base: the records an active controller
// appends, which it applies to its working state before they commit.
func (l *Loader) Replay(base int64, epoch int32, recs []metadata.Record, versions []int16) error {
	if l.err != nil {
		return l.err
	}
	if len(versions) != len(recs) {
		return fmt.Errorf("image: %d records with %d versions", len(recs), len(versions))
	}
	d := make([]decoded, len(recs))
	for i := range recs {
		d[i] = decoded{recs[i], versions[i]}
	}
	return l.replayBatch(base, base+int64(len(recs))-1, epoch, d)
}

type decoded struct {
	rec     metadata.Record
	version int16
}

func (l *Loader) fail(err error) error {
	l.err = err
	return err
}

func (l *Loader) replayBatch(base, last int64, epoch int32, recs []decoded) error {
	if at := l.b.Provenance().Offset; base <= at {
		return l.fail(fmt.Errorf("image: batch at offset %d does not follow offset %d", base, at))
	}
	if last < base+int64(len(recs))-1 {
		return l.fail(fmt.Errorf("image: batch at offset %d holds %d records but ends at %d", base, len(recs), last))
	}
	for i, d := range recs {
		off := base + int64(i)
		var err error
		switch d.rec.(type) {
		case *metadata.BeginTransactionRecord:
			if l.txStart >= 0 {
				err = fmt.Errorf("a transaction begun at offset %d was never closed", l.txStart)
				break
			}
			l.preTx, l.txStart = l.b.Image(), off
			l.b.Advance(off, epoch)
		case *metadata.EndTransactionRecord:
			if l.txStart < 0 {
				err = errors.New("no transaction is open")
				break
			}
			l.preTx, l.txStart = nil, -1
			l.b.Advance(off, epoch)
		case *metadata.AbortTransactionRecord:
			if l.txStart < 0 {
				err = errors.New("no transaction is open")
				break
			}
			l.b = NewBuilder(l.preTx, l.opts)
			l.preTx, l.txStart = nil, -1
			l.b.Advance(off, epoch)
		default:
			if rerr := l.b.Replay(off, epoch, d.rec, d.version); rerr != nil {
				return l.fail(rerr)
			}
		}
		if err != nil {
			return l.fail(&ReplayError{Offset: off, Type: d.rec.TypeName(), Version: d.version, Reason: err.Error()})
		}
	}
	l.b.Advance(last, epoch)
	if l.txStart < 0 {
		l.pub = l.b.Image()
	}
	return nil
}

// LoadSnapshot replaces the state by the snapshot's (raft's
// HandleLoadSnapshot), or, for the bootstrap snapshot 0-0, keeps its records
// apart and changes nothing. The image it publishes stands at the snapshot's
// last offset, id.Offset-1.
func (l *Loader) LoadSnapshot(snap raft.OffsetAndEpoch, r raft.SnapshotReader) error {
	if l.err != nil {
		return l.err
	}
	bootstrap := snap.Offset == 0 && snap.Epoch == 0
	var recs []metadata.Record
	var versions []int16
	b := NewBuilder(Empty(), l.opts)
	last := snap.Offset - 1
	err := readSnapshot(r, func(v []byte) error {
		rec, version, err := metadata.Decode(v)
		if err != nil {
			return err
		}
		if bootstrap {
			recs = append(recs, rec)
			versions = append(versions, version)
			return nil
		}
		switch rec.(type) {
		case *metadata.BeginTransactionRecord, *metadata.EndTransactionRecord, *metadata.AbortTransactionRecord:
			return &ReplayError{Offset: last, Type: rec.TypeName(), Version: version, Reason: "a transaction marker inside a snapshot"}
		}
		return b.Replay(last, snap.Epoch, rec, version)
	})
	if err != nil {
		return l.fail(fmt.Errorf("image: snapshot %d-%d: %w", snap.Offset, snap.Epoch, err))
	}
	if bootstrap {
		l.boot = append([]metadata.Record{}, recs...)
		l.bootV = versions
		return nil
	}
	b.Advance(last, snap.Epoch)
	l.b, l.txStart, l.preTx = b, -1, nil
	l.pub = b.Image()
	return nil
}

// readSnapshot hands fn each data record value of a snapshot file, batch by
// batch, reading one batch at a time.
func readSnapshot(r raft.SnapshotReader, fn func(value []byte) error) error {
	var head [protocol.BatchHeaderSize]byte
	var buf []byte
	var values [][]byte
	for pos, size := int64(0), r.Size(); pos < size; {
		if size-pos < protocol.BatchHeaderSize {
			return fmt.Errorf("%d bytes left at position %d: a torn batch", size-pos, pos)
		}
		if _, err := r.ReadAt(head[:], pos); err != nil {
			return fmt.Errorf("read at position %d: %w", pos, err)
		}
		h, err := protocol.ParseBatchHeader(head[:])
		if err != nil {
			return err
		}
		n := int64(h.Size())
		if n > size-pos {
			return fmt.Errorf("batch at position %d of %d bytes runs past the end (%d)", pos, n, size)
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := r.ReadAt(buf, pos); err != nil {
			return fmt.Errorf("read at position %d: %w", pos, err)
		}
		pos += n
		if h.IsControl() {
			continue
		}
		_, values, _, err = protocol.DecodeValues(buf, values[:0])
		if err != nil {
			return err
		}
		for _, v := range values {
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	return nil
}

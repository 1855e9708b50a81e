package workload

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kraftd/kraftd/protocol"
)

// JournalEntry is one acknowledged batch of a commit journal: the leader's
// workload appended it in Epoch and saw it committed at [Base, Last].
type JournalEntry struct {
	Base, Last int64
	Epoch      int32
	// CRC is RecordsCRC of the batch's record values: the content the
	// workload appended. (Kafka's batch CRC also covers timestamps and
	// attributes, which the commit listener never sees.)
	CRC uint32
}

func (e JournalEntry) String() string {
	return fmt.Sprintf("[%d,%d] epoch %d crc %08x", e.Base, e.Last, e.Epoch, e.CRC)
}

// RecordsCRC is the CRC-32C of record values, each preceded by its 4-byte
// big-endian length (so moving a byte between records changes it).
func RecordsCRC(values [][]byte) uint32 {
	var b []byte
	for _, v := range values {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return protocol.CRC32C(b)
}

// journalFlushEvery bounds how often the journal is fsynced: an fsync per
// commit callback would slow the leader's loop for a test-only record.
const journalFlushEvery = 20 * time.Millisecond

// Journal is the commit journal of --commit-journal: an append-only text
// file, one line "base last epoch crc" per acknowledged batch. Entries are
// buffered and written with an fsync in batches; an entry is acknowledged
// only once that fsync returned, so a process killed in between loses only
// entries nobody counted.
type Journal struct {
	f         *os.File
	buf       []byte
	lastFlush time.Time
}

// OpenJournal opens (appending to) the journal at path.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("commit journal: %w", err)
	}
	return &Journal{f: f}, nil
}

func (j *Journal) add(e JournalEntry) {
	j.buf = fmt.Appendf(j.buf, "%d %d %d %08x\n", e.Base, e.Last, e.Epoch, e.CRC)
}

// due reports when the buffered entries should be flushed (zero: nothing
// buffered).
func (j *Journal) due() time.Time {
	if len(j.buf) == 0 {
		return time.Time{}
	}
	return j.lastFlush.Add(journalFlushEvery)
}

// Flush writes and fsyncs the buffered entries.
func (j *Journal) Flush(now time.Time) error {
	j.lastFlush = now
	if len(j.buf) == 0 {
		return nil
	}
	if _, err := j.f.Write(j.buf); err != nil {
		return fmt.Errorf("commit journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("commit journal: fsync: %w", err)
	}
	j.buf = j.buf[:0]
	return nil
}

// Close flushes and closes the journal.
func (j *Journal) Close() error {
	err := j.Flush(time.Now())
	return errors.Join(err, j.f.Close())
}

// ReadJournal parses a commit journal. A last line without its newline is
// a write cut by a crash before its fsync, never acknowledged: it is
// ignored. Any other malformed line is an error naming it.
func ReadJournal(r io.Reader) ([]JournalEntry, error) {
	var out []JournalEntry
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		s, err := br.ReadString('\n')
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		e, perr := parseJournalLine(strings.TrimSuffix(s, "\n"))
		if perr != nil {
			return nil, fmt.Errorf("commit journal line %d: %w", line, perr)
		}
		out = append(out, e)
	}
}

func parseJournalLine(s string) (JournalEntry, error) {
	f := strings.Fields(s)
	if len(f) != 4 {
		return JournalEntry{}, fmt.Errorf("%q: want 4 fields", s)
	}
	base, err1 := strconv.ParseInt(f[0], 10, 64)
	last, err2 := strconv.ParseInt(f[1], 10, 64)
	epoch, err3 := strconv.ParseInt(f[2], 10, 32)
	crc, err4 := strconv.ParseUint(f[3], 16, 32)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return JournalEntry{}, fmt.Errorf("%q: %w", s, err)
	}
	if base < 0 || last < base || epoch < 0 {
		return JournalEntry{}, fmt.Errorf("%q: bad offsets or epoch", s)
	}
	return JournalEntry{Base: base, Last: last, Epoch: int32(epoch), CRC: uint32(crc)}, nil
}

package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// BatchHeaderSize is the size of a v2 record batch header (Kafka's RECORD_BATCH_OVERHEAD).
const BatchHeaderSize = 61

// batchLengthOffset is where BatchLength ends: BatchLength counts the bytes after it.
const batchLogOverhead = 12

// minBatchLength is the BatchLength of a batch with no records: the header minus the log
// overhead.
const minBatchLength = BatchHeaderSize - batchLogOverhead

// Attribute bits of a v2 batch.
const (
	AttrCompressionMask int16 = 0x07
	AttrTimestampType   int16 = 0x08
	AttrTransactional   int16 = 0x10
	AttrControl         int16 = 0x20
	AttrDeleteHorizon   int16 = 0x40
)

// Compression codecs (attributes & 7).
const (
	CompressionNone   int8 = 0
	CompressionGzip   int8 = 1
	CompressionSnappy int8 = 2
	CompressionLZ4    int8 = 3
	CompressionZstd   int8 = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the checksum of record batches (CRC-32C, Castagnoli).
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

var (
	// ErrShortBatch is wrapped when b holds less than the whole batch (a torn tail).
	ErrShortBatch = errors.New("protocol: short record batch")
	// ErrCorruptBatch is wrapped for a batch whose bytes are complete but invalid (magic,
	// length, CRC, records).
	ErrCorruptBatch = errors.New("protocol: corrupt record batch")
)

// BatchHeader is the fixed 61-byte header of a v2 record batch.
type BatchHeader struct {
	BaseOffset           int64
	BatchLength          int32 // bytes after the BatchLength field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// Size is the whole batch size in bytes: BatchLength + 12.
func (h BatchHeader) Size() int { return int(h.BatchLength) + batchLogOverhead }

// LastOffset is the offset of the batch's last record.
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset following the batch.
func (h BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// IsControl reports the control flag (attribute bit 5).
func (h BatchHeader) IsControl() bool { return h.Attributes&AttrControl != 0 }

// Compression is the codec in attribute bits 0-2.
func (h BatchHeader) Compression() int8 { return int8(h.Attributes & AttrCompressionMask) }

// ParseBatchHeader decodes the 61-byte header; errors: short input (wraps ErrShortBatch),
// magic != 2, BatchLength < 49 (wrap ErrCorruptBatch). No CRC check.
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	if len(b) < BatchHeaderSize {
		return h, fmt.Errorf("%w: %d bytes, a batch header needs %d", ErrShortBatch, len(b), BatchHeaderSize)
	}
	be := binary.BigEndian
	h.BaseOffset = int64(be.Uint64(b[0:]))
	h.BatchLength = int32(be.Uint32(b[8:]))
	h.PartitionLeaderEpoch = int32(be.Uint32(b[12:]))
	h.Magic = int8(b[16])
	h.CRC = be.Uint32(b[17:])
	h.Attributes = int16(be.Uint16(b[21:]))
	h.LastOffsetDelta = int32(be.Uint32(b[23:]))
	h.BaseTimestamp = int64(be.Uint64(b[27:]))
	h.MaxTimestamp = int64(be.Uint64(b[35:]))
	h.ProducerID = int64(be.Uint64(b[43:]))
	h.ProducerEpoch = int16(be.Uint16(b[51:]))
	h.BaseSequence = int32(be.Uint32(b[53:]))
	h.RecordCount = int32(be.Uint32(b[57:]))
	if h.Magic != 2 {
		return h, fmt.Errorf("%w: batch at offset %d has magic %d, only magic 2 is supported", ErrCorruptBatch, h.BaseOffset, h.Magic)
	}
	if h.BatchLength < minBatchLength {
		return h, fmt.Errorf("%w: batch at offset %d has length %d, below the minimum %d", ErrCorruptBatch, h.BaseOffset, h.BatchLength, minBatchLength)
	}
	return h, nil
}

// CheckBatch = ParseBatchHeader + len(b) >= Size() (else ErrShortBatch) + CRC-32C
// (Castagnoli) over attributes..end of batch.
func CheckBatch(b []byte) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	if err := checkWhole(b, h); err != nil {
		return h, err
	}
	return h, checkCRC(b, h)
}

// checkWhole: b holds the whole batch h heads (else ErrShortBatch).
func checkWhole(b []byte, h BatchHeader) error {
	if len(b) < h.Size() {
		return fmt.Errorf("%w: batch at offset %d needs %d bytes, have %d", ErrShortBatch, h.BaseOffset, h.Size(), len(b))
	}
	return nil
}

// checkCRC compares the CRC-32C (Castagnoli) over attributes..end of the
// whole batch b with its header's.
func checkCRC(b []byte, h BatchHeader) error {
	if crc := CRC32C(b[21:h.Size()]); crc != h.CRC {
		return fmt.Errorf("%w: batch at offset %d has CRC 0x%08x, computed 0x%08x", ErrCorruptBatch, h.BaseOffset, h.CRC, crc)
	}
	return nil
}

// SetBaseOffset rewrites the base offset in place (not covered by the CRC).
func SetBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch, uint64(off))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch in place (not covered by the
// CRC).
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[12:], uint32(epoch))
}

// RecordHeader is a record header (key and value).
type RecordHeader struct {
	Key   string
	Value []byte
}

// Record is one record of a batch.
type Record struct {
	OffsetDelta    int32
	TimestampDelta int64
	Key, Value     []byte // nil = null
	Headers        []RecordHeader
}

// Batch is a decoded v2 record batch (producer fields are always -1 in KRaft).
type Batch struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Control              bool
	BaseTimestamp        int64    // ms
	MaxTimestamp         int64    // ms
	Records              []Record // OffsetDelta of record i must be i
}

// LastOffset is the offset of the last record (BaseOffset - 1 for an empty batch).
func (b *Batch) LastOffset() int64 { return b.BaseOffset + int64(len(b.Records)) - 1 }

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

func bytesFieldLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendBytesField(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// recordBodyLen is the size of a record after its length varint.
func recordBodyLen(r *Record, offsetDelta int32) int {
	n := 1 + varintLen(r.TimestampDelta) + varintLen(int64(offsetDelta)) +
		bytesFieldLen(r.Key) + bytesFieldLen(r.Value) + varintLen(int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesFieldLen(h.Value)
	}
	return n
}

// AppendBatch encodes an uncompressed batch (producer id -1, producer epoch -1, base
// sequence -1), computing BatchLength, LastOffsetDelta, RecordCount and the CRC. Record i
// is written with OffsetDelta i. MaxTimestamp is raised to the largest record timestamp
// when b.MaxTimestamp is below it.
func AppendBatch(dst []byte, b Batch) []byte {
	start := len(dst)
	maxTS := b.MaxTimestamp
	for i := range b.Records {
		if ts := b.BaseTimestamp + b.Records[i].TimestampDelta; ts > maxTS {
			maxTS = ts
		}
	}
	var attrs int16
	if b.Control {
		attrs |= AttrControl
	}
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(b.BaseOffset))
	dst = be.AppendUint32(dst, 0) // BatchLength, filled below
	dst = be.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, 2)          // magic
	dst = be.AppendUint32(dst, 0) // CRC, filled below
	dst = be.AppendUint16(dst, uint16(attrs))
	dst = be.AppendUint32(dst, uint32(int32(len(b.Records))-1))
	dst = be.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = be.AppendUint64(dst, uint64(maxTS))
	dst = be.AppendUint64(dst, math.MaxUint64) // producer id -1
	dst = be.AppendUint16(dst, math.MaxUint16) // producer epoch -1
	dst = be.AppendUint32(dst, math.MaxUint32) // base sequence -1
	dst = be.AppendUint32(dst, uint32(len(b.Records)))
	for i := range b.Records {
		r := &b.Records[i]
		dst = binary.AppendVarint(dst, int64(recordBodyLen(r, int32(i))))
		dst = append(dst, 0) // record attributes
		dst = binary.AppendVarint(dst, r.TimestampDelta)
		dst = binary.AppendVarint(dst, int64(i))
		dst = appendBytesField(dst, r.Key)
		dst = appendBytesField(dst, r.Value)
		dst = binary.AppendVarint(dst, int64(len(r.Headers)))
		for j := range r.Headers {
			h := &r.Headers[j]
			dst = binary.AppendVarint(dst, int64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendBytesField(dst, h.Value)
		}
	}
	batch := dst[start:]
	be.PutUint32(batch[8:], uint32(len(batch)-batchLogOverhead))
	be.PutUint32(batch[17:], CRC32C(batch[21:]))
	return dst
}

// DecodeBatch checks and fully decodes one batch (decompressing if needed) and returns the
// bytes after it. Keys and values alias b for uncompressed batches.
func DecodeBatch(b []byte) (Batch, []byte, error) {
	h, data, rest, err := openBatch(b)
	out := Batch{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Control:              h.IsControl(),
		BaseTimestamp:        h.BaseTimestamp,
		MaxTimestamp:         h.MaxTimestamp,
	}
	if err != nil {
		return out, nil, err
	}
	recs := make([]Record, h.RecordCount)
	if err := walkRecords(data, h.RecordCount, func(i int) *Record { return &recs[i] }, nil); err != nil {
		return out, nil, fmt.Errorf("%w: batch at offset %d: %v", ErrCorruptBatch, h.BaseOffset, err)
	}
	out.Records = recs
	return out, rest, nil
}

// DecodeValues checks and decodes one batch as DecodeBatch does but keeps only its record
// values, appended to dst (aliasing b for uncompressed batches), and returns the bytes
// after it: a reader that needs nothing else of a record (raft's listeners) is spared one
// Record per record.
func DecodeValues(b []byte, dst [][]byte) (BatchHeader, [][]byte, []byte, error) {
	h, data, rest, err := openBatch(b)
	if err != nil {
		return h, dst, nil, err
	}
	dst = slices.Grow(dst, int(h.RecordCount))
	var rec Record
	slot := func(int) *Record {
		rec = Record{Headers: rec.Headers[:0]}
		return &rec
	}
	keep := func(r *Record) error {
		dst = append(dst, r.Value)
		return nil
	}
	if err := walkRecords(data, h.RecordCount, slot, keep); err != nil {
		return h, dst, nil, fmt.Errorf("%w: batch at offset %d: %v", ErrCorruptBatch, h.BaseOffset, err)
	}
	return h, dst, rest, nil
}

// openBatch checks one batch's header, CRC and counts and returns its records region
// (decompressed into a fresh buffer when compressed) and the bytes after it. The record
// count is checked against the region's size before anyone sizes a slice by it, so what
// a caller allocates per record is bounded by the bytes it was given.
func openBatch(b []byte) (h BatchHeader, records, rest []byte, err error) {
	h, err = CheckBatch(b)
	if err != nil {
		return h, nil, nil, err
	}
	if err := checkCounts(h); err != nil {
		return h, nil, nil, err
	}
	records, err = decompress(h.Compression(), b[BatchHeaderSize:h.Size()])
	if err != nil {
		return h, nil, nil, fmt.Errorf("%w: batch at offset %d: %v", ErrCorruptBatch, h.BaseOffset, err)
	}
	if int64(h.RecordCount)*minRecordSize > int64(len(records)) {
		return h, nil, nil, fmt.Errorf("%w: batch at offset %d: %d records cannot fit in %d bytes", ErrCorruptBatch, h.BaseOffset, h.RecordCount, len(records))
	}
	return h, records, b[h.Size():], nil
}

// checkCounts: every offset of a batch holds a record (KRaft never compacts), so
// LastOffsetDelta is RecordCount-1; anything else would leave offsets no reader can
// account for.
func checkCounts(h BatchHeader) error {
	if h.RecordCount < 0 || h.LastOffsetDelta != h.RecordCount-1 {
		return fmt.Errorf("%w: batch at offset %d has last offset delta %d for %d records",
			ErrCorruptBatch, h.BaseOffset, h.LastOffsetDelta, h.RecordCount)
	}
	return nil
}

// ValidateBatchHeader applies the rules of ValidateBatch that the header alone decides
// (no CRC, no records): a whole v2 batch of at most maxBytes bytes, a base offset >= 0
// whose range does not overflow, a leader epoch >= 0, at least one record and one record
// per offset. It lets a reader that only steps over batches refuse the same nonsense.
func ValidateBatchHeader(b []byte, maxBytes int) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	// Before the length check: an absurd BatchLength must not pass for a torn tail.
	if h.Size() > maxBytes {
		return h, fmt.Errorf("%w: batch at offset %d is %d bytes, above the limit %d", ErrCorruptBatch, h.BaseOffset, h.Size(), maxBytes)
	}
	if err := checkWhole(b, h); err != nil {
		return h, err
	}
	switch {
	case h.BaseOffset < 0:
		return h, fmt.Errorf("%w: batch has negative base offset %d", ErrCorruptBatch, h.BaseOffset)
	case h.PartitionLeaderEpoch < 0:
		return h, fmt.Errorf("%w: batch at offset %d has no leader epoch (%d)", ErrCorruptBatch, h.BaseOffset, h.PartitionLeaderEpoch)
	case h.RecordCount < 1:
		return h, fmt.Errorf("%w: batch at offset %d holds %d records", ErrCorruptBatch, h.BaseOffset, h.RecordCount)
	}
	if err := checkCounts(h); err != nil {
		return h, err
	}
	if h.BaseOffset > math.MaxInt64-int64(h.RecordCount) {
		return h, fmt.Errorf("%w: batch at offset %d: %d records overflow the offset range", ErrCorruptBatch, h.BaseOffset, h.RecordCount)
	}
	return h, nil
}

// ValidateBatch applies every rule a KRaft log batch must meet on its own, so that the
// log's Append and a follower checking its leader's data share one list: a whole v2
// header, at most maxBytes bytes, a matching CRC, a base offset >= 0 whose range does not
// overflow, a leader epoch >= 0, at least one record and one record per offset, records
// that decode (decompressed within MaxDecompressedBatchBytes), and in a control batch
// control records of a known type whose values decode. Where the batch sits in a log
// (offsets, epochs) is the caller's to check. A batch cut short wraps ErrShortBatch, any
// other refusal ErrCorruptBatch.
func ValidateBatch(b []byte, maxBytes int) (BatchHeader, error) {
	h, err := ValidateBatchHeader(b, maxBytes)
	if err != nil {
		return h, err
	}
	if err := checkCRC(b, h); err != nil {
		return h, err
	}
	var rec Record // one record reused: validation keeps nothing
	slot := func(int) *Record {
		rec = Record{Headers: rec.Headers[:0]}
		return &rec
	}
	var check func(*Record) error
	if h.IsControl() {
		check = checkControlRecord
	}
	err = withScratch(h.Compression(), b[BatchHeaderSize:h.Size()], func(data []byte) error {
		return walkRecords(data, h.RecordCount, slot, check)
	})
	if err != nil {
		return h, fmt.Errorf("%w: batch at offset %d: %v", ErrCorruptBatch, h.BaseOffset, err)
	}
	return h, nil
}

// checkControlRecord: a control record's key names a type the JVM reader knows (it fails
// on any other) and its value decodes as that type.
func checkControlRecord(r *Record) error {
	typ, value, err := ReadControlRecord(*r)
	if err != nil {
		return err
	}
	switch typ {
	case ControlLeaderChange:
		_, err = DecodeLeaderChange(value)
	case ControlSnapshotHeader:
		err = new(SnapshotHeaderRecord).ReadFrom(value)
	case ControlSnapshotFooter:
		err = new(SnapshotFooterRecord).ReadFrom(value)
	case ControlKRaftVersion:
		err = new(KRaftVersionRecord).ReadFrom(value)
	case ControlKRaftVoters:
		err = new(VotersRecord).ReadFrom(value)
	default:
		err = fmt.Errorf("%w: unknown control type %d", ErrBadControlRecord, typ)
	}
	return err
}

// minRecordSize is the smallest encoded record: length, attributes, timestamp delta, offset
// delta, key length, value length and header count, one byte each.
const minRecordSize = 7

// recordReader decodes the varint-based record encoding.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.b = nil
}

func (r *recordReader) varlong(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint for %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint(what string) int32 {
	v := r.varlong(what)
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("%s %d overflows int32", what, v)
		return 0
	}
	return int32(v)
}

// bytes reads a length-prefixed field; lengthWhat names its length in
// errors (a constant: building it per call would allocate per record).
func (r *recordReader) bytes(what, lengthWhat string) []byte {
	n := r.varint(lengthWhat)
	if r.err != nil || n < 0 {
		if n < -1 {
			r.fail("%s length %d", what, n)
		}
		return nil
	}
	if int(n) > len(r.b) {
		r.fail("%s length %d exceeds the %d remaining bytes", what, n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// walkRecords decodes count records from data, record i into slot(i) (which decides what
// is kept: DecodeBatch keeps them all, ValidateBatch reuses one), then runs check on it
// when check is not nil.
func walkRecords(data []byte, count int32, slot func(i int) *Record, check func(*Record) error) error {
	if int64(count)*minRecordSize > int64(len(data)) {
		return fmt.Errorf("%d records cannot fit in %d bytes", count, len(data))
	}
	r := recordReader{b: data}
	for i := 0; i < int(count); i++ {
		rec := slot(i)
		length := r.varint("record length")
		if r.err != nil {
			return fmt.Errorf("record %d: %w", i, r.err)
		}
		if length < minRecordSize-1 || int(length) > len(r.b) {
			return fmt.Errorf("record %d: length %d with %d bytes remaining", i, length, len(r.b))
		}
		rr := recordReader{b: r.b[:length]}
		r.b = r.b[length:]
		rr.b = rr.b[1:] // record attributes, unused in v2
		rec.TimestampDelta = rr.varlong("timestamp delta")
		rec.OffsetDelta = rr.varint("offset delta")
		rec.Key = rr.bytes("key", "key length")
		rec.Value = rr.bytes("value", "value length")
		nh := rr.varint("header count")
		if rr.err == nil && (nh < 0 || int(nh)*2 > len(rr.b)) {
			rr.fail("header count %d with %d bytes remaining", nh, len(rr.b))
		}
		if rr.err == nil && nh > 0 {
			rec.Headers = slices.Grow(rec.Headers[:0], int(nh))[:nh]
			for j := range rec.Headers {
				k := rr.bytes("header key", "header key length")
				if k == nil && rr.err == nil {
					rr.fail("header %d has a null key", j)
				}
				rec.Headers[j] = RecordHeader{Key: string(k), Value: rr.bytes("header value", "header value length")}
			}
		}
		if rr.err != nil {
			return fmt.Errorf("record %d: %w", i, rr.err)
		}
		if len(rr.b) != 0 {
			return fmt.Errorf("record %d: %d bytes left after its fields", i, len(rr.b))
		}
		if check != nil {
			if err := check(rec); err != nil {
				return fmt.Errorf("record %d: %w", i, err)
			}
		}
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%d bytes after the last of %d records", len(r.b), count)
	}
	return nil
}

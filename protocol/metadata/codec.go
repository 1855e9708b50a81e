package metadata

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The primitives the generated code calls. Every metadata record is flexible
// from version 0 (Kafka's flexibleVersions "0+"): strings, bytes and arrays
// have compact lengths (unsigned varint of length+1, 0 for null) and every
// struct ends with a tagged-field section.

// maxStringLen is the longest string Kafka's generated code writes or reads.
const maxStringLen = 0x7fff

// fieldError is the first failure of an encoder or decoder: the field it hit
// (prefixed with array elements as the failure unwinds) and why.
type fieldError struct {
	path   string
	reason string
}

// in records that the failure happened inside element i of field.
func (f *fieldError) in(field string, i int) {
	p := fmt.Sprintf("%s[%d]", field, i)
	if f.path != "" {
		p += "." + f.path
	}
	f.path = p
}

func (f *fieldError) record(op string, rec Record, version int16) *Error {
	return &Error{Op: op, Type: rec.TypeName(), APIKey: rec.APIKey(), Version: version, Field: f.path, Reason: f.reason}
}

// encoder appends a body to dst. After the first failure it keeps going
// harmlessly; the caller discards what it wrote.
type encoder struct {
	dst []byte
	err *fieldError
}

func (e *encoder) fail(field, format string, args ...any) {
	if e.err == nil {
		e.err = &fieldError{path: field, reason: fmt.Sprintf(format, args...)}
	}
}

func (e *encoder) ok() bool { return e.err == nil }

// absent reports a field the version cannot carry that holds something else
// than its default, as Kafka refuses it ("Attempted to write a non-default
// ... at version").
func (e *encoder) absent(field string, version int16) {
	e.fail(field, "a non-default value cannot be written at version %d", version)
}

func (e *encoder) bool(v bool)       { e.dst = kbin.AppendBool(e.dst, v) }
func (e *encoder) int8(v int8)       { e.dst = kbin.AppendInt8(e.dst, v) }
func (e *encoder) int16(v int16)     { e.dst = kbin.AppendInt16(e.dst, v) }
func (e *encoder) uint16(v uint16)   { e.dst = kbin.AppendUint16(e.dst, v) }
func (e *encoder) int32(v int32)     { e.dst = kbin.AppendInt32(e.dst, v) }
func (e *encoder) uint32(v uint32)   { e.dst = kbin.AppendUint32(e.dst, v) }
func (e *encoder) int64(v int64)     { e.dst = kbin.AppendInt64(e.dst, v) }
func (e *encoder) float64(v float64) { e.dst = kbin.AppendFloat64(e.dst, v) }
func (e *encoder) uuid(v [16]byte)   { e.dst = kbin.AppendUuid(e.dst, v) }
func (e *encoder) uvarint(v uint32)  { e.dst = kbin.AppendUvarint(e.dst, v) }
func (e *encoder) null()             { e.dst = append(e.dst, 0) }

func (e *encoder) string(field, s string) {
	if len(s) > maxStringLen {
		e.fail(field, "a string of %d bytes: Kafka's strings hold at most %d", len(s), maxStringLen)
		return
	}
	if !utf8.ValidString(s) {
		e.fail(field, "%s", errNotUTF8)
		return
	}
	e.dst = kbin.AppendCompactString(e.dst, s)
}

// nullableString writes a *string field; nullable says whether the version
// allows null.
func (e *encoder) nullableString(field string, s *string, nullable bool) {
	if s == nil {
		e.nullOrFail(field, nullable)
		return
	}
	e.string(field, *s)
}

// bytes writes a bytes field; null marks a nil value of a field that can be
// null at some version (a field never nullable writes nil as empty).
func (e *encoder) bytes(field string, b []byte, null, nullable bool) {
	if null {
		e.nullOrFail(field, nullable)
		return
	}
	e.dst = kbin.AppendCompactBytes(e.dst, b)
}

// arrayLen starts an array of n elements and reports whether they follow;
// null is as for bytes.
func (e *encoder) arrayLen(field string, n int, null, nullable bool) bool {
	if null {
		e.nullOrFail(field, nullable)
		return false
	}
	if n >= math.MaxUint32 {
		e.fail(field, "%d elements are too many for an array", n)
		return false
	}
	e.uvarint(uint32(n) + 1)
	return true
}

func (e *encoder) nullOrFail(field string, nullable bool) {
	if !nullable {
		e.fail(field, "null is not allowed at this version")
		return
	}
	e.null()
}

// tagWriter writes a tagged-field section: the known fields the generated
// code writes in tag order, and the unknown ones kept from decoding placed
// among them by tag, as Kafka's RawTaggedFieldWriter does.
type tagWriter struct {
	unknown []RawTaggedField
	start   int // where the value of the tag being written starts
}

// beginTags writes the section's field count: the known fields to be written
// and every unknown one. Unknown tags must ascend and not be a known field's
// (knownTags), or decoding would read them differently.
func (e *encoder) beginTags(known int, unknown []RawTaggedField, knownTags []uint32) tagWriter {
	for i, u := range unknown {
		if i > 0 && u.Tag <= unknown[i-1].Tag {
			e.fail("UnknownTags", "tag %d follows tag %d: tags must ascend", u.Tag, unknown[i-1].Tag)
		}
		if slices.Contains(knownTags, u.Tag) {
			e.fail("UnknownTags", "tag %d is a known field's tag", u.Tag)
		}
	}
	e.uvarint(uint32(known + len(unknown)))
	return tagWriter{unknown: unknown}
}

// tag writes the unknown fields below tag, then starts known field tag.
func (e *encoder) tag(t *tagWriter, tag uint32) {
	e.unknownBelow(t, tag)
	e.uvarint(tag)
	t.start = len(e.dst)
}

// endTag puts the size of the value just written in front of it.
func (e *encoder) endTag(t *tagWriter) {
	size := len(e.dst) - t.start
	var buf [5]byte
	sz := kbin.AppendUvarint(buf[:0], uint32(size))
	e.dst = append(e.dst, sz...)
	copy(e.dst[t.start+len(sz):], e.dst[t.start:t.start+size])
	copy(e.dst[t.start:], sz)
}

// endTags writes the unknown fields left.
func (e *encoder) endTags(t *tagWriter) { e.unknownBelow(t, math.MaxUint32) }

func (e *encoder) unknownBelow(t *tagWriter, tag uint32) {
	for len(t.unknown) > 0 && (t.unknown[0].Tag < tag || tag == math.MaxUint32) {
		u := t.unknown[0]
		e.uvarint(u.Tag)
		e.uvarint(uint32(len(u.Data)))
		e.dst = append(e.dst, u.Data...)
		t.unknown = t.unknown[1:]
	}
}

// decoder reads a body with kbin's primitives. The first failure names the
// field and stops it: every later read returns a zero value.
type decoder struct {
	r     kbin.Reader
	err   *fieldError
	inTag bool // reading one tagged field's data
}

func (d *decoder) ok() bool { return d.err == nil }

func (d *decoder) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = &fieldError{path: field, reason: fmt.Sprintf(format, args...)}
	}
	d.r.Src = nil
}

// check turns a kbin read that ran out of input into the field's failure.
func (d *decoder) check(field string) {
	if !d.r.Ok() && d.err == nil {
		reason := "the record ends inside the field"
		if d.inTag {
			reason = "the value runs past the tagged field's size"
		}
		d.err = &fieldError{path: field, reason: reason}
	}
}

func (d *decoder) bool(field string) bool       { v := d.r.Bool(); d.check(field); return v }
func (d *decoder) int8(field string) int8       { v := d.r.Int8(); d.check(field); return v }
func (d *decoder) int16(field string) int16     { v := d.r.Int16(); d.check(field); return v }
func (d *decoder) uint16(field string) uint16   { v := d.r.Uint16(); d.check(field); return v }
func (d *decoder) int32(field string) int32     { v := d.r.Int32(); d.check(field); return v }
func (d *decoder) uint32(field string) uint32   { v := d.r.Uint32(); d.check(field); return v }
func (d *decoder) int64(field string) int64     { v := d.r.Int64(); d.check(field); return v }
func (d *decoder) float64(field string) float64 { v := d.r.Float64(); d.check(field); return v }
func (d *decoder) uuid(field string) [16]byte   { v := d.r.Uuid(); d.check(field); return v }

func (d *decoder) uvarint(field string) uint32 {
	v := d.r.Uvarint()
	if !d.r.Ok() && d.err == nil {
		d.err = &fieldError{path: field, reason: "truncated or overlong varint"}
	}
	return v
}

// length reads a compact length: -1 for null (or after a failure).
func (d *decoder) length(field string) int64 {
	return int64(d.uvarint(field)) - 1
}

// span takes the next n bytes, refusing a length the input does not hold.
func (d *decoder) span(field string, n int64) []byte {
	if n > int64(len(d.r.Src)) {
		d.fail(field, "length %d exceeds the %d bytes left", n, len(d.r.Src))
		return nil
	}
	return d.r.Span(int(n))
}

func (d *decoder) string(field string) string {
	if s := d.nullableString(field, false); s != nil {
		return *s
	}
	return ""
}

// nullableString reads a string; nullable says whether the version allows
// null.
func (d *decoder) nullableString(field string, nullable bool) *string {
	n := d.length(field)
	switch {
	case !d.ok():
		return nil
	case n < 0:
		if !nullable {
			d.fail(field, "null for a non-nullable string")
		}
		return nil
	case n > maxStringLen:
		d.fail(field, "string length %d exceeds %d", n, maxStringLen)
		return nil
	}
	b := d.span(field, n)
	if !d.ok() {
		return nil
	}
	if !utf8.Valid(b) {
		d.fail(field, "%s", errNotUTF8)
		return nil
	}
	s := string(b)
	return &s
}

// errNotUTF8 refuses strings Kafka would not read back as written: Java
// decodes bytes that are not UTF-8 to U+FFFD, and never writes them.
const errNotUTF8 = "not valid UTF-8 (Kafka would read U+FFFD in its place)"

// bytes reads a bytes field: nil for null, a copy otherwise (never nil).
func (d *decoder) bytes(field string, nullable bool) []byte {
	n := d.length(field)
	if !d.ok() {
		return nil
	}
	if n < 0 {
		if !nullable {
			d.fail(field, "null for a non-nullable bytes field")
		}
		return nil
	}
	b := d.span(field, n)
	if !d.ok() {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// arrayLen reads an array's length: -1 for null or a failure. A count whose
// elements (minElem bytes each at least) cannot fit in the bytes left is
// refused before anything is allocated.
func (d *decoder) arrayLen(field string, nullable bool, minElem int) int {
	n := d.length(field)
	switch {
	case !d.ok():
		return -1
	case n < 0:
		if !nullable {
			d.fail(field, "null for a non-nullable array")
		}
		return -1
	case n*int64(minElem) > int64(len(d.r.Src)):
		d.fail(field, "%d elements cannot fit in the %d bytes left", n, len(d.r.Src))
		return -1
	}
	return int(n)
}

// tagCount reads a tagged-field section's field count.
func (d *decoder) tagCount() int {
	n := int64(d.uvarint("tagged fields"))
	if n*2 > int64(len(d.r.Src)) { // a tag and a size, one byte each at least
		d.fail("tagged fields", "%d tagged fields cannot fit in the %d bytes left", n, len(d.r.Src))
		return 0
	}
	return int(n)
}

// tag reads one tagged field's tag and data. Tags must ascend: Kafka writes
// them so, and a repeated or reordered tag would not re-encode as read.
func (d *decoder) tag(last *int64) (uint32, []byte, bool) {
	tag := d.uvarint("tagged fields")
	size := d.uvarint("tagged fields")
	if !d.ok() {
		return 0, nil, false
	}
	if int64(tag) <= *last {
		d.fail("tagged fields", "tag %d follows tag %d: tags must ascend", tag, *last)
		return 0, nil, false
	}
	*last = int64(tag)
	if int(size) > len(d.r.Src) || size > math.MaxInt32 {
		d.fail("tagged fields", "tag %d of size %d overruns the %d bytes left", tag, size, len(d.r.Src))
		return 0, nil, false
	}
	return tag, d.r.Span(int(size)), true
}

// sub is a decoder for one tagged field's data.
func (d *decoder) sub(data []byte) decoder { return decoder{r: kbin.Reader{Src: data}, inTag: true} }

// endTag takes a tagged field's decoder back: its failure, or data its
// value left unread.
func (d *decoder) endTag(sub *decoder, field string) {
	if sub.err != nil {
		if d.err == nil {
			d.err = sub.err
		}
		d.r.Src = nil
		return
	}
	if n := len(sub.r.Src); n > 0 {
		d.fail(field, "the tagged field holds %d bytes after its value", n)
	}
}

// unknownTag keeps a tagged field the schema does not know.
func unknownTag(tags []RawTaggedField, tag uint32, data []byte) []RawTaggedField {
	return append(tags, RawTaggedField{Tag: tag, Data: append([]byte{}, data...)})
}

// tagNotValid refuses a known tag at a version whose schema does not have
// it, as Kafka does ("Tag N is not valid for version V").
func (d *decoder) tagNotValid(field string, tag uint32, version int16) {
	d.fail(field, "tag %d is not valid at version %d", tag, version)
}

// ptr is a pointer to a copy of v, for defaults of nullable strings.
func ptr[T any](v T) *T { return &v }

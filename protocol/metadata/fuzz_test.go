package metadata_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
)

// FuzzDecode: decoding never panics and fails only with a *metadata.Error;
// what decodes encodes again, and that encoding decodes to the same record
// and encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	_, _, values := randomRecords(f, 3, 2)
	for _, v := range values {
		f.Add(v)
	}
	for _, v := range [][]byte{{1, 20, 0, 0}, {1, 5, 2}, {1, 0, 4, 0}, {1, 14, 0, 2, 2, 'a', 0x05}, {}} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		rec, v, err := metadata.Decode(value)
		if err != nil {
			var me *metadata.Error
			if !errors.As(err, &me) || !errors.Is(err, metadata.ErrMalformed) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		b1, err := metadata.Append(nil, rec, v)
		if err != nil {
			t.Fatalf("%s v%d decoded but does not encode: %v", rec.TypeName(), v, err)
		}
		rec2, v2, err := metadata.Decode(b1)
		if err != nil || v2 != v {
			t.Fatalf("%s v%d: its encoding %x does not decode: v%d %v", rec.TypeName(), v, b1, v2, err)
		}
		if d := metareflect.Diff(rec, rec2); d != "" {
			t.Fatalf("%s v%d: decode-encode-decode differs at %s", rec.TypeName(), v, d)
		}
		if b2, err := metadata.Append(nil, rec2, v); err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("%s v%d: encodings differ: %x, %x", rec.TypeName(), v, b1, b2)
		}
	})
}

package uuid

import (
	"bytes"
	"strings"
	"testing"
)

func TestRandomIsVersion4(t *testing.T) {
	seen := map[UUID]bool{}
	for i := 0; i < 2000; i++ {
		u := Random()
		s := u.String()
		if len(s) != 22 {
			t.Fatalf("%q: length %d", s, len(s))
		}
		if strings.HasPrefix(s, "-") {
			t.Fatalf("%q starts with '-'", s)
		}
		if u[6]>>4 != 4 || u[8]>>6 != 2 {
			t.Fatalf("%x: not a version 4 IETF-variant uuid", u[:])
		}
		p, err := Parse(s)
		if err != nil || p != u {
			t.Fatalf("Parse(%q) = %x, %v; want %x", s, p, err, u)
		}
		if seen[u] {
			t.Fatalf("duplicate %s", s)
		}
		seen[u] = true
	}
}

func TestRandomFromRedrawsDash(t *testing.T) {
	// First draw: 0xF8 in byte 0 gives first sextet 62 = '-'.
	first := bytes.Repeat([]byte{0x11}, 16)
	first[0] = 0xF8
	second := bytes.Repeat([]byte{0x22}, 16)
	u, err := RandomFrom(bytes.NewReader(append(first, second...)))
	if err != nil {
		t.Fatal(err)
	}
	if u[0] != 0x22 {
		t.Fatalf("got %s (%x), want the second draw", u, u[:])
	}
	// A reader that only ever yields dash ids runs dry: error, no endless loop.
	if _, err := RandomFrom(bytes.NewReader(first)); err == nil {
		t.Fatal("want an error when the reader runs out")
	}
}

func TestKnownIDs(t *testing.T) {
	for _, tc := range []struct {
		u    UUID
		text string
	}{
		{Zero, "AAAAAAAAAAAAAAAAAAAAAA"},
		{MetadataTopicID, "AAAAAAAAAAAAAAAAAAAAAQ"},
		{UUID{15: 2}, "AAAAAAAAAAAAAAAAAAAAAg"},
	} {
		if got := tc.u.String(); got != tc.text {
			t.Errorf("String = %q, want %q", got, tc.text)
		}
		if got, err := Parse(tc.text); err != nil || got != tc.u {
			t.Errorf("Parse(%q) = %x, %v", tc.text, got, err)
		}
	}
	if !Zero.Reserved() || !MetadataTopicID.Reserved() || (UUID{15: 2}).Reserved() {
		t.Error("Reserved must be Kafka's Uuid.RESERVED")
	}
	if !ReservedDirectoryID(UUID{15: 99}) || ReservedDirectoryID(UUID{15: 100}) || ReservedDirectoryID(UUID{0: 1}) {
		t.Error("ReservedDirectoryID must cover exactly the first 100 ids")
	}
}

func TestParseErrors(t *testing.T) {
	good := "MkU3OEVBNTcwNTJENDM2Qg"
	if _, err := Parse(good); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(good + "=="); err != nil {
		t.Fatalf("padded form: %v", err)
	}
	for _, bad := range []string{"", "abc", good + "A", good[:21], good[:21] + "+", good[:21] + "/", good[:10] + "\n" + good[11:], good + "=", good + "AA", strings.Repeat("A", 1000)} {
		_, err := Parse(bad)
		if err == nil {
			t.Errorf("Parse(%q): no error", bad)
			continue
		}
		if !strings.Contains(err.Error(), "22 base64url characters") {
			t.Errorf("Parse(%q): %v does not say what is wrong", bad, err)
		}
		if len(err.Error()) > 300 {
			t.Errorf("Parse: unbounded error message (%d bytes)", len(err.Error()))
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"MkU3OEVBNTcwNTJENDM2Qg", "AAAAAAAAAAAAAAAAAAAAAA", "J8aAPcfLQt2bqs1JT_rMgQ==", "", "-", "\x00", "J8aAPcfLQt2bqs1JT_rMg\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			return
		}
		if len(s) != 22 && len(s) != 24 {
			t.Fatalf("accepted %q of length %d", s, len(s))
		}
		// The canonical text parses back to the same id and equals the input
		// up to the ignored low bits of the last character.
		text := u.String()
		u2, err := Parse(text)
		if err != nil || u2 != u {
			t.Fatalf("%q -> %s -> %x, %v", s, text, u2, err)
		}
		if text[:21] != s[:21] {
			t.Fatalf("%q renders as %q", s, text)
		}
	})
}

package javaprops

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
		keys []string
	}{
		{"simple", "a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}, []string{"a", "b"}},
		{"colon and blank separators", "a:1\nb 2\nc\t:\t3\n", map[string]string{"a": "1", "b": "2", "c": "3"}, []string{"a", "b", "c"}},
		{"comments and blank lines", "# comment\n! also\n\n   \n  a=1\n", map[string]string{"a": "1"}, []string{"a"}},
		{"comment does not continue", "# x \\\na=1\n", map[string]string{"a": "1"}, []string{"a"}},
		{"continuation", "a=one, \\\n    two,\\\n\tthree\n", map[string]string{"a": "one, two,three"}, []string{"a"}},
		{"even backslashes end the line", "a=x\\\\\nb=y\n", map[string]string{"a": `x\`, "b": "y"}, []string{"a", "b"}},
		{"escapes", `a=\t\n\r\f\\\=\:\#x\u0041\u00e9` + "\n", map[string]string{"a": "\t\n\r\f\\=:#xAé"}, []string{"a"}},
		{"surrogate pair", `a=\ud83d\ude00` + "\n", map[string]string{"a": "😀"}, []string{"a"}},
		{"escaped separator in key", `my\=key=v` + "\n" + `sp\ ace=w`, map[string]string{"my=key": "v", "sp ace": "w"}, []string{"my=key", "sp ace"}},
		{"value keeps later separators", "a==b:c\n", map[string]string{"a": "=b:c"}, []string{"a"}},
		{"key only", "flag\n", map[string]string{"flag": ""}, []string{"flag"}},
		{"CR and CRLF endings", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}, []string{"a", "b", "c"}},
		{"last duplicate wins", "a=1\nb=2\na=3\n", map[string]string{"a": "3", "b": "2"}, []string{"a", "b"}},
		{"trailing blanks kept in value", "a=1  \n", map[string]string{"a": "1  "}, []string{"a"}},
		{"continuation at EOF", "a=1\\", map[string]string{"a": "1"}, []string{"a"}},
		{"empty", "", map[string]string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Values, tt.want) {
				t.Errorf("values = %q, want %q", p.Values, tt.want)
			}
			if !reflect.DeepEqual(p.Keys, tt.keys) {
				t.Errorf("keys = %q, want %q", p.Keys, tt.keys)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uZZZZ`, "x=1\n" + `b\u004=1`} {
		if _, err := Parse(in); err == nil {
			t.Errorf("%q: want error", in)
		} else if !strings.Contains(err.Error(), "line") {
			t.Errorf("%q: error %q does not name the line", in, err)
		}
	}
}

// TestEscapeRoundTrip: what Escape writes, Parse reads back as the same
// key and value, whatever they hold.
func TestEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", " lead", "trail ", "a b", "k=v:w", "#!", `back\slash`,
		"tab\tnl\ncr\rff\f", "\x01\x7f", "é", "😀", "line\\"} {
		roundTrip(t, s)
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", " x", "a=b", "\\", "é\u0041", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // Java strings are UTF-16; invalid UTF-8 has no text to keep
		}
		roundTrip(t, s)
	})
}

func roundTrip(t *testing.T, s string) {
	t.Helper()
	text := Escape(s, true) + "=" + Escape(s, false) + "\n"
	p, err := Parse(text)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	if len(p.Keys) != 1 || p.Keys[0] != s || p.Values[s] != s {
		t.Fatalf("%q -> %q -> keys %q values %q", s, text, p.Keys, p.Values)
	}
	if strings.ContainsAny(text[:len(text)-1], "\n\r") {
		t.Fatalf("%q: the escaped line %q spans lines", s, text)
	}
}

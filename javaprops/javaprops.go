// Package javaprops reads and writes java.util.Properties text, the format
// of Kafka's server.properties and of the meta.properties file in every log
// dir. It is a leaf (standard library only): the storage tooling reads
// meta.properties with it without linking the server configuration.
package javaprops

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Properties is parsed Java .properties text: keys in text order (the last
// assignment of a duplicated key wins, at the position of its first
// appearance) and their values.
type Properties struct {
	Keys   []string
	Values map[string]string
	// Lines maps a key to the 1-based line where its last assignment starts,
	// for error messages (0 for a key set otherwise).
	Lines map[string]int
}

// New returns empty Properties.
func New() *Properties {
	return &Properties{Values: map[string]string{}, Lines: map[string]int{}}
}

// Get returns a key's value and whether it is set.
func (p *Properties) Get(key string) (string, bool) {
	v, ok := p.Values[key]
	return v, ok
}

// Set assigns a key, appending it to Keys when it is new.
func (p *Properties) Set(key, value string) {
	if _, ok := p.Values[key]; !ok {
		p.Keys = append(p.Keys, key)
	}
	p.Values[key] = value
}

// Parse parses text in java.util.Properties.load syntax:
//   - lines end with \n, \r or \r\n; leading blanks (space, tab, form feed)
//     are skipped; blank lines and lines whose first non-blank is '#' or '!'
//     are comments (a comment never continues onto the next line);
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped;
//   - the key ends at the first unescaped '=', ':' or blank; blanks around
//     the separator and one '=' or ':' are skipped; the rest is the value;
//   - escapes \t \n \r \f \uXXXX, and backslash before any other character
//     yields that character.
func Parse(text string) (*Properties, error) {
	p := New()
	lineNo := 0
	i := 0
	n := len(text)
	for i < n {
		// Read one logical line (natural lines joined by continuations).
		lineNo++
		start := lineNo
		// Skip leading blanks of the natural line.
		for i < n && isBlank(text[i]) {
			i++
		}
		if i >= n {
			break
		}
		if text[i] == '\n' || text[i] == '\r' {
			i = skipEOL(text, i)
			continue
		}
		if text[i] == '#' || text[i] == '!' {
			for i < n && text[i] != '\n' && text[i] != '\r' {
				i++
			}
			i = skipEOL(text, i)
			continue
		}
		var logical strings.Builder
		for {
			j := i
			for j < n && text[j] != '\n' && text[j] != '\r' {
				j++
			}
			seg := text[i:j]
			i = skipEOL(text, j)
			// Count trailing backslashes: an odd count is a continuation.
			bs := 0
			for k := len(seg) - 1; k >= 0 && seg[k] == '\\'; k-- {
				bs++
			}
			if bs%2 == 1 && (i < n || j < n) {
				logical.WriteString(seg[:len(seg)-1])
				lineNo++
				for i < n && isBlank(text[i]) {
					i++
				}
				continue
			}
			if bs%2 == 1 {
				// Continuation at end of file: Java drops the backslash.
				seg = seg[:len(seg)-1]
			}
			logical.WriteString(seg)
			break
		}
		key, value, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", start, err)
		}
		p.Set(key, value)
		p.Lines[key] = start
	}
	return p, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func skipEOL(text string, i int) int {
	if i < len(text) && text[i] == '\r' {
		i++
		if i < len(text) && text[i] == '\n' {
			i++
		}
		return i
	}
	if i < len(text) && text[i] == '\n' {
		i++
	}
	return i
}

// splitProperty splits a logical line (leading blanks already removed) into
// its unescaped key and value.
func splitProperty(line string) (string, string, error) {
	k := 0
	for k < len(line) {
		c := line[k]
		if c == '\\' {
			k += 2
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			break
		}
		k++
	}
	if k > len(line) {
		k = len(line)
	}
	rawKey := line[:k]
	v := k
	for v < len(line) && isBlank(line[v]) {
		v++
	}
	if v < len(line) && (line[v] == '=' || line[v] == ':') {
		v++
		for v < len(line) && isBlank(line[v]) {
			v++
		}
	}
	key, err := Unescape(rawKey)
	if err != nil {
		return "", "", fmt.Errorf("key %q: %w", rawKey, err)
	}
	value, err := Unescape(line[v:])
	if err != nil {
		return "", "", fmt.Errorf("value of %q: %w", key, err)
	}
	return key, value, nil
}

// Unescape decodes the escapes of a key or value as Properties.load does:
// \t \n \r \f \uXXXX (a surrogate pair of them one code point), and a
// backslash before any other character yields that character.
func Unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break // a lone trailing backslash is dropped, as Java does
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, err := hex4(s, i+1)
			if err != nil {
				return "", err
			}
			i += 4
			// Java strings are UTF-16: a high surrogate escape followed
			// by a low surrogate escape is one code point.
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, err := hex4(s, i+3); err == nil {
					if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
						r = c
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// hex4 decodes the four hex digits of a \uXXXX escape starting at s[i].
func hex4(s string, i int) (rune, error) {
	if i+4 > len(s) {
		return 0, fmt.Errorf(`malformed \uxxxx escape: %q`, s[i-2:])
	}
	var r rune
	for _, h := range s[i : i+4] {
		var d rune
		switch {
		case h >= '0' && h <= '9':
			d = h - '0'
		case h >= 'a' && h <= 'f':
			d = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			d = h - 'A' + 10
		default:
			return 0, fmt.Errorf(`malformed \uxxxx escape: %q`, s[i-2:i+4])
		}
		r = r<<4 | d
	}
	return r, nil
}

// Escape renders a key (key true) or a value as Java's Properties.store
// writes it: '\\', '=', ':', '#' and '!' backslashed, a space escaped
// everywhere in a key and at the start of a value, control characters as
// \t, \n, \r, \f, and anything outside printable ASCII as \uXXXX UTF-16
// units. Parse reads the result back to s.
func Escape(s string, key bool) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == '\\' || c == '=' || c == ':' || c == '#' || c == '!':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20 || c > 0x7e:
			for _, u := range utf16.Encode([]rune{c}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

package config

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Properties is a parsed Java .properties file: keys in file order (the last
// assignment of a duplicated key wins, at the position of its first
// appearance) and their values.
type Properties struct {
	Keys   []string
	Values map[string]string
	// Lines maps a key to the 1-based line where its last assignment starts,
	// for error messages.
	Lines map[string]int
	// Origins names where a key not read from a file came from (e.g.
	// "environment variable KAFKA_NODE_ID"), for messages; may be nil.
	Origins map[string]string
}

// Get returns a key's value and whether it is set.
func (p *Properties) Get(key string) (string, bool) {
	v, ok := p.Values[key]
	return v, ok
}

// Set assigns a key (used for --override).
func (p *Properties) Set(key, value string) {
	if _, ok := p.Values[key]; !ok {
		p.Keys = append(p.Keys, key)
	}
	p.Values[key] = value
}

func newProperties() *Properties {
	return &Properties{Values: map[string]string{}, Lines: map[string]int{}}
}

// maxPropertiesFile bounds what we read: a config file is a few KiB; anything
// near this size is not one.
const maxPropertiesFile = 16 << 20

// LoadProperties reads and parses a properties file.
func LoadProperties(path string) (*Properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if st.Size() > maxPropertiesFile {
		return nil, fmt.Errorf("config: %s: file is %d bytes, larger than the %d bytes a properties file may have", path, st.Size(), maxPropertiesFile)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	p, err := ParseProperties(string(b))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	return p, nil
}

// ParseProperties parses text in java.util.Properties.load syntax:
//   - lines end with \n, \r or \r\n; leading blanks (space, tab, form feed)
//     are skipped; blank lines and lines whose first non-blank is '#' or '!'
//     are comments (a comment never continues onto the next line);
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped;
//   - the key ends at the first unescaped '=', ':' or blank; blanks around
//     the separator and one '=' or ':' are skipped; the rest is the value;
//   - escapes \t \n \r \f \uXXXX, and backslash before any other character
//     yields that character.
func ParseProperties(text string) (*Properties, error) {
	p := newProperties()
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
	key, err := unescape(rawKey)
	if err != nil {
		return "", "", fmt.Errorf("key %q: %w", rawKey, err)
	}
	value, err := unescape(line[v:])
	if err != nil {
		return "", "", fmt.Errorf("value of %q: %w", key, err)
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
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

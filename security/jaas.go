package security

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// JAASEntry is one login module of a sasl.jaas.config value:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required
//	    username="admin" password="secret" user_admin="secret";
type JAASEntry struct {
	LoginModule string
	ControlFlag string            // REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL
	Options     map[string]string // a repeated key keeps its last value, as Kafka's HashMap
}

// Login modules Kafka uses for the mechanisms kraftd implements.
const (
	PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// ParseJAAS parses JAAS configuration text as Kafka's JaasConfig does with
// java.io.StreamTokenizer: words of letters, digits, '.', '-', '_' and '$';
// single- or double-quoted strings with backslash escapes; // and /* */
// comments; entries "module flag key=value ... ;". Errors use Kafka's
// words. Two deliberate differences, both refusals of text Kafka accepts
// in a surprising way: an unterminated quoted string (Java's tokenizer ends
// it at the end of the line) and an option whose name is a number (Java
// stores it under a null key).
func ParseJAAS(text string) ([]*JAASEntry, error) {
	t := &jaasTokenizer{s: text}
	var out []*JAASEntry
	for {
		tok, err := t.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(t, tok)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("Login module not specified in JAAS config")
	}
	return out, nil
}

// ParseServerJAAS parses a listener's <mechanism>.sasl.jaas.config, which
// must hold exactly one login module (Kafka's JaasContext.load).
func ParseServerJAAS(text string) (*JAASEntry, error) {
	es, err := ParseJAAS(text)
	if err != nil {
		return nil, err
	}
	if len(es) != 1 {
		return nil, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(es))
	}
	return es[0], nil
}

// checkModule refuses a login module that cannot serve mechanism m: Kafka
// reads PLAIN's user_ entries only from PlainLoginModule, and kraftd knows
// no other module.
func (e *JAASEntry) checkModule(m string) error {
	want := PlainLoginModule
	if m != MechPlain {
		want = ScramLoginModule
	}
	if e.LoginModule != want {
		return fmt.Errorf("login module %s cannot serve mechanism %s (want %s)", e.LoginModule, m, want)
	}
	return nil
}

// PlainUsers are the user_<name>="<password>" options of a PlainLoginModule
// entry: the credentials a PLAIN server accepts.
func (e *JAASEntry) PlainUsers() map[string]string {
	users := map[string]string{}
	for k, v := range e.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok {
			users[name] = v
		}
	}
	return users
}

func parseJAASEntry(t *jaasTokenizer, first jaasToken) (*JAASEntry, error) {
	if !first.hasText() || first.text == "" {
		return nil, errors.New("login module name missing in JAAS config")
	}
	e := &JAASEntry{LoginModule: first.text, Options: map[string]string{}}
	tok, err := t.next()
	if err != nil {
		return nil, err
	}
	if tok.kind == tokEOF {
		return nil, errors.New("Login module control flag not specified in JAAS config")
	}
	if !tok.hasText() {
		return nil, errors.New("Login module control flag is not available in the JAAS config")
	}
	switch f := strings.ToUpper(tok.text); f {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		e.ControlFlag = f
	default:
		return nil, fmt.Errorf("Invalid login module control flag '%s' in JAAS config", tok.text)
	}
	for {
		key, err := t.next()
		if err != nil {
			return nil, err
		}
		if key.kind == tokEOF || key.kind == tokChar && key.char == ';' {
			if key.kind == tokEOF {
				return nil, errors.New("JAAS config entry not terminated by semi-colon")
			}
			return e, nil
		}
		name := key.text
		if !key.hasText() {
			name = "null"
		}
		eq, err := t.next()
		if err != nil {
			return nil, err
		}
		if eq.kind != tokChar || eq.char != '=' {
			return nil, fmt.Errorf("Value not specified for key '%s' in JAAS config", name)
		}
		val, err := t.next()
		if err != nil {
			return nil, err
		}
		if val.kind == tokEOF || !val.hasText() {
			return nil, fmt.Errorf("Value not specified for key '%s' in JAAS config", name)
		}
		if !key.hasText() {
			return nil, errors.New("option name missing before '=' in JAAS config (a number is not a name)")
		}
		e.Options[key.text] = val.text
	}
}

type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // text
	tokQuoted         // text
	tokNumber         // no text, as Java's tokenizer gives none
	tokChar           // char
)

type jaasToken struct {
	kind tokKind
	text string
	char rune
}

func (t jaasToken) hasText() bool { return t.kind == tokWord || t.kind == tokQuoted }

// jaasTokenizer follows java.io.StreamTokenizer's default syntax table with
// Kafka's additions (slash comments on; '-', '_', '$' word characters).
type jaasTokenizer struct {
	s   string
	pos int
}

func (t *jaasTokenizer) peek() (rune, int) {
	if t.pos >= len(t.s) {
		return -1, 0
	}
	r, n := utf8.DecodeRuneInString(t.s[t.pos:])
	return r, n
}

func (t *jaasTokenizer) read() rune {
	r, n := t.peek()
	t.pos += n
	return r
}

func isJAASDigit(r rune) bool { return r >= '0' && r <= '9' || r == '.' || r == '-' }

func isJAASAlpha(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 160 || r == '_' || r == '$' || r == '-'
}

func (t *jaasTokenizer) skipLine() {
	for {
		r, _ := t.peek()
		if r < 0 || r == '\n' || r == '\r' {
			return
		}
		t.read()
	}
}

func (t *jaasTokenizer) next() (jaasToken, error) {
	for {
		start := t.pos
		r := t.read()
		switch {
		case r < 0:
			return jaasToken{kind: tokEOF}, nil
		case r <= ' ':
			continue
		case r == '/':
			switch n, _ := t.peek(); n {
			case '*':
				t.read()
				end := strings.Index(t.s[t.pos:], "*/")
				if end < 0 {
					t.pos = len(t.s) // Java's tokenizer ends the input in the comment
					continue
				}
				t.pos += end + 2
			case '/':
				t.skipLine()
			default:
				// '/' is also Java's default comment character: the rest
				// of the line, from the character after it, is a comment.
				t.read()
				t.skipLine()
			}
			continue
		case isJAASDigit(r):
			if r == '-' {
				if n, _ := t.peek(); n != '.' && (n < '0' || n > '9') {
					return jaasToken{kind: tokChar, char: '-'}, nil
				}
			}
			dot := r == '.'
			for {
				n, _ := t.peek()
				if n >= '0' && n <= '9' || n == '.' && !dot {
					dot = dot || n == '.'
					t.read()
					continue
				}
				break
			}
			return jaasToken{kind: tokNumber}, nil
		case isJAASAlpha(r):
			for {
				n, size := t.peek()
				if n < 0 || !isJAASAlpha(n) && !isJAASDigit(n) {
					break
				}
				t.pos += size
			}
			return jaasToken{kind: tokWord, text: t.s[start:t.pos]}, nil
		case r == '"' || r == '\'':
			return t.quoted(r)
		default:
			return jaasToken{kind: tokChar, char: r}, nil
		}
	}
}

// quoted reads a string closed by quote, with StreamTokenizer's escapes.
func (t *jaasTokenizer) quoted(quote rune) (jaasToken, error) {
	var b strings.Builder
	for {
		r := t.read()
		switch {
		case r == quote:
			return jaasToken{kind: tokQuoted, text: b.String()}, nil
		case r < 0 || r == '\n' || r == '\r':
			return jaasToken{}, errors.New("unterminated quoted string in JAAS config")
		case r != '\\':
			b.WriteRune(r)
			continue
		}
		r = t.read()
		switch r {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case -1:
			return jaasToken{}, errors.New("unterminated quoted string in JAAS config")
		default:
			if r >= '0' && r <= '7' {
				// Up to three octal digits, the third only after a first
				// digit of at most 3 (the value stays below 256).
				v := r - '0'
				if n, _ := t.peek(); n >= '0' && n <= '7' {
					t.read()
					v = v<<3 + n - '0'
					if n2, _ := t.peek(); n2 >= '0' && n2 <= '7' && r <= '3' {
						t.read()
						v = v<<3 + n2 - '0'
					}
				}
				b.WriteRune(v)
				continue
			}
			b.WriteRune(r)
		}
	}
}

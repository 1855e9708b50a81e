package dashboards

import (
	"fmt"
	"strings"
)

type tokenKind int

const (
	tEOF    tokenKind = iota
	tIdent            // metric, label, function or keyword
	tNumber           // also durations (5m) and hex
	tString           // quoted, quotes kept
	tOp               // arithmetic, comparison, matcher, @
	tPunct            // ( ) { } [ ] ,
	tVar              // a Grafana variable: $name, ${name}, ${name:format}
)

type token struct {
	kind tokenKind
	text string
}

// lex splits a PromQL expression into tokens.
func lex(expr string) ([]token, error) {
	var toks []token
	for i := 0; i < len(expr); {
		c := expr[i]
		var kind tokenKind
		var n int
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#': // a comment, to the end of the line
			n = strings.IndexByte(expr[i:], '\n')
			if n < 0 {
				n = len(expr) - i
			}
			i += n
			continue
		case isIdentStart(c):
			kind, n = tIdent, span(expr[i:], isIdentChar)
		case isDigit(c) || (c == '.' && i+1 < len(expr) && isDigit(expr[i+1])):
			kind, n = tNumber, numberLen(expr[i:])
		case c == '"' || c == '\'' || c == '`':
			kind, n = tString, stringLen(expr[i:])
		case c == '$':
			kind, n = tVar, varLen(expr[i:])
		case strings.IndexByte("(){}[],", c) >= 0:
			kind, n = tPunct, 1
		default:
			kind, n = tOp, opLen(expr[i:])
		}
		if n <= 0 {
			return nil, fmt.Errorf("%q: cannot read %q at offset %d", expr, expr[i:], i)
		}
		toks = append(toks, token{kind, expr[i : i+n]})
		i += n
	}
	return toks, nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

func span(s string, ok func(byte) bool) int {
	n := 0
	for n < len(s) && ok(s[n]) {
		n++
	}
	return n
}

// numberLen reads a number or duration: 1, 0.5, 1e-3, 0x1f, 5m, 1h30m.
func numberLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		switch {
		case isIdentChar(c) || c == '.':
			n++
		case (c == '+' || c == '-') && (s[n-1] == 'e' || s[n-1] == 'E') && !strings.HasPrefix(s, "0x"):
			n++
		default:
			return n
		}
	}
	return n
}

// stringLen reads a quoted string; 0 when unclosed.
func stringLen(s string) int {
	q := s[0]
	for n := 1; n < len(s); n++ {
		switch {
		case s[n] == '\\' && q != '`':
			n++
		case s[n] == q:
			return n + 1
		}
	}
	return 0
}

// varLen reads a Grafana variable; 0 when malformed.
func varLen(s string) int {
	if strings.HasPrefix(s, "${") {
		return strings.IndexByte(s, '}') + 1 // 0 when unclosed
	}
	n := span(s[1:], isIdentChar)
	if n == 0 {
		return 0
	}
	return 1 + n
}

// opLen reads an operator; 0 when s starts with none.
func opLen(s string) int {
	for _, op := range []string{"==", "!=", "<=", ">=", "=~", "!~"} {
		if strings.HasPrefix(s, op) {
			return 2
		}
	}
	if strings.IndexByte("+-*/%^<>=@", s[0]) >= 0 {
		return 1
	}
	return 0
}

package webhookfilter

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
)

// jval is the filter's JSON as read, members in the order written (for the first fault in
// document order and a stable evaluation order). Numbers keep their literal.
type jval struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' boolean, 'z' null
	str  string
	b    bool
	obj  []member
	arr  []jval
}

type member struct {
	key string
	val jval
}

// pointer is where the reader or the compiler is, built into a JSON Pointer only for a
// fault (the fan-out may parse a stored filter per event: no string per value).
type pointer []ref

type ref struct {
	key string
	idx int // -1 for a key
}

func (p pointer) key(k string) pointer { return append(p, ref{key: k, idx: -1}) }
func (p pointer) index(i int) pointer  { return append(p, ref{idx: i}) }

// newPointer is the filter's own pointer, with room for the deepest one: a value's
// pointer extends its parent's in place (siblings in turn reuse the slot), so walking a
// filter allocates none.
func newPointer(maxDepth int) pointer { return make(pointer, 0, 2*maxDepth+2) }

// String is the RFC 6901 pointer from "filter": "~" written "~0", "/" written "~1".
func (p pointer) String() string {
	var b strings.Builder
	b.WriteString(root)
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, r := range p {
		b.WriteByte('/')
		if r.idx >= 0 {
			b.WriteString(strconv.Itoa(r.idx))
		} else {
			b.WriteString(esc.Replace(r.key))
		}
	}
	return b.String()
}

func (p pointer) fault(msg string) *Fault { return fault(p.String(), msg) }

// reader is a small JSON reader for filters: unlike encoding/json it refuses duplicate
// keys, applies §15's string rule to each literal as sent (encoding/json would quietly
// turn invalid UTF-8 and half surrogates into U+FFFD) and checks numbers with jsonnum
// before anything is built from them.
type reader struct {
	s        []byte
	text     string // s as a string: what is read is a substring of it, not a copy
	i        int
	maxDepth int
	items    []jval // arrays being read, innermost last: each copied out once, at its size
	open     []byte // the containers a payload's skip is in (kept to be reused)
}

var errSyntax = errors.New("is not valid JSON")

func readJSON(raw []byte, maxDepth int) (jval, error) {
	r := &reader{s: raw, text: string(raw), maxDepth: maxDepth}
	v, err := r.value(newPointer(maxDepth), 0)
	if err != nil {
		return jval{}, err
	}
	if r.ws(); r.i != len(r.s) {
		return jval{}, fault(root, "has data after the filter object")
	}
	return v, nil
}

func (r *reader) ws() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// next skips whitespace and tells the next byte (0 at the end).
func (r *reader) next() byte {
	if r.ws(); r.i < len(r.s) {
		return r.s[r.i]
	}
	return 0
}

var literals = []struct {
	text []byte
	v    jval
}{{[]byte("true"), jval{kind: 'b', b: true}}, {[]byte("false"), jval{kind: 'b'}}, {[]byte("null"), jval{kind: 'z'}}}

func (r *reader) value(at pointer, depth int) (jval, error) {
	switch c := r.next(); {
	case c == '{' || c == '[':
		if depth+1 > r.maxDepth {
			return jval{}, at.fault("is nested more than " + strconv.Itoa(r.maxDepth) + " levels deep")
		}
		r.i++
		if c == '{' {
			obj, err := r.object(at, depth+1)
			return jval{kind: 'o', obj: obj}, err
		}
		arr, err := r.array(at, depth+1)
		return jval{kind: 'a', arr: arr}, err
	case c == '"':
		s, err := r.string()
		if err != nil {
			return jval{}, at.fault(err.Error())
		}
		return jval{kind: 's', str: s}, nil
	case c == '-' || isDigit(c):
		lit := r.number()
		if err := jsonnum.Check(lit); err != nil {
			if errors.Is(err, jsonnum.ErrNotNumber) {
				err = errSyntax
			}
			return jval{}, at.fault(err.Error())
		}
		return jval{kind: 'n', str: lit}, nil
	}
	if v, ok := r.literal(); ok {
		return v, nil
	}
	return jval{}, at.fault(errSyntax.Error())
}

// literal reads true, false or null at r.i.
func (r *reader) literal() (jval, bool) {
	for _, lit := range literals {
		if bytes.HasPrefix(r.s[r.i:], lit.text) {
			r.i += len(lit.text)
			return lit.v, true
		}
	}
	return jval{}, false
}

// number reads the characters of a number literal at r.i (checked by its caller).
func (r *reader) number() string {
	start := r.i
	for r.i < len(r.s) && strings.IndexByte("+-.eE0123456789", r.s[r.i]) >= 0 {
		r.i++
	}
	return r.text[start:r.i]
}

func (r *reader) object(at pointer, depth int) ([]member, error) {
	var ms []member
	var seen map[string]bool // past a few keys, so that 4 KiB of keys cost no n²
	if r.next() == '}' {
		r.i++
		return ms, nil
	}
	for {
		if r.next() != '"' {
			return nil, at.fault(errSyntax.Error())
		}
		key, err := r.string()
		if err != nil {
			if errors.Is(err, errSyntax) {
				return nil, at.fault(err.Error())
			}
			return nil, at.fault("has a key that " + err.Error())
		}
		if r.next() != ':' {
			return nil, at.fault(errSyntax.Error())
		}
		r.i++
		dup := seen[key]
		if seen == nil {
			for _, m := range ms {
				dup = dup || m.key == key
			}
			if len(ms) == 8 {
				seen = make(map[string]bool, 16)
				for _, m := range ms {
					seen[m.key] = true
				}
			}
		}
		if dup {
			return nil, at.key(key).fault("is given twice")
		}
		if seen != nil {
			seen[key] = true
		}
		v, err := r.value(at.key(key), depth)
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{key: key, val: v})
		switch r.next() {
		case ',':
			r.i++
		case '}':
			r.i++
			return ms, nil
		default:
			return nil, at.fault(errSyntax.Error())
		}
	}
}

func (r *reader) array(at pointer, depth int) ([]jval, error) {
	if r.next() == ']' {
		r.i++
		return nil, nil
	}
	mark := len(r.items)
	for {
		v, err := r.value(at.index(len(r.items)-mark), depth)
		if err != nil {
			return nil, err
		}
		r.items = append(r.items, v)
		switch r.next() {
		case ',':
			r.i++
		case ']':
			r.i++
			vs := append([]jval(nil), r.items[mark:]...)
			r.items = r.items[:mark]
			return vs, nil
		default:
			return nil, at.fault(errSyntax.Error())
		}
	}
}

// string reads the literal at r.i (its opening quote) and returns its text. Its errors
// are errSyntax or a textcheck reason (the literal is JSON but not a §15 string).
func (r *reader) string() (string, error) {
	start, end, escaped, err := r.scanString()
	if err != nil {
		return "", err
	}
	content := r.s[start:end]
	if err := textcheck.JSONString(content, escaped); err != nil {
		return "", err
	}
	if !escaped {
		return r.text[start:end], nil
	}
	return unescape(content), nil
}

// scanString moves past the literal at r.i (its opening quote), checking its syntax only,
// and tells where its content is and whether it holds an escape.
func (r *reader) scanString() (start, end int, escaped bool, err error) {
	start = r.i + 1
	i := start
	for ; ; i++ {
		if i >= len(r.s) || r.s[i] < 0x20 {
			return 0, 0, false, errSyntax
		}
		c := r.s[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			continue
		}
		escaped = true
		if i++; i >= len(r.s) {
			return 0, 0, false, errSyntax
		}
		switch r.s[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(r.s) {
				return 0, 0, false, errSyntax
			}
			for _, h := range r.s[i+1 : i+5] {
				if !isHex(h) {
					return 0, 0, false, errSyntax
				}
			}
			i += 4
		default:
			return 0, 0, false, errSyntax
		}
	}
	r.i = i + 1
	return start, i, escaped, nil
}

// unescape decodes the escapes of a literal JSONString has passed: every \u is a
// character or a whole surrogate pair, none is NUL.
func unescape(content []byte) string {
	b := make([]byte, 0, len(content))
	for i := 0; i < len(content); i++ {
		c := content[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch content[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(content[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				r = utf16.DecodeRune(r, hex4(content[i+3:]))
				i += 6
			}
			b = utf8.AppendRune(b, r)
		default: // " \ /
			b = append(b, content[i])
		}
	}
	return string(b)
}

// hex4 reads the four hex digits that follow \u (checked by string).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		if isDigit(c) {
			r = r<<4 | rune(c-'0')
		} else {
			r = r<<4 | rune(c|0x20-'a'+10)
		}
	}
	return r
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

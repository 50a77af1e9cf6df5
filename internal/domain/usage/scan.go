package usage

import "github.com/revops/revops/internal/platform/jsonnum"

// maxDepth is encoding/json's nesting limit: a deeper document is invalid JSON there, so
// it is here too.
const maxDepth = 10000

// scanner walks a JSON document once, validating it exactly as encoding/json does (same
// grammar, same nesting limit, bytes of a string not checked for UTF-8), and lets the
// decoder pick out the members it wants on the way: no document tree, no map, no second
// pass over the body.
type scanner struct {
	data  []byte
	pos   int
	depth int
}

// span is a value's bytes in the body, [start, end); end 0 means absent.
type span struct{ start, end int }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// peek skips white space and returns the next byte, 0 at the end of the data.
func (s *scanner) peek() byte {
	for s.pos < len(s.data) && isSpace(s.data[s.pos]) {
		s.pos++
	}
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// atEnd tells whether only white space is left.
func (s *scanner) atEnd() bool {
	s.peek()
	return s.pos == len(s.data)
}

// value validates the value at pos, moves past it and returns its span.
func (s *scanner) value() (span, bool) {
	c := s.peek()
	start := s.pos
	var ok bool
	switch c {
	case '{':
		ok = s.object(func([]byte, bool) bool { _, ok := s.value(); return ok })
	case '[':
		ok = s.array(func(int) bool { _, ok := s.value(); return ok })
	case '"':
		_, _, ok = s.str()
	case 't':
		ok = s.literal("true")
	case 'f':
		ok = s.literal("false")
	case 'n':
		ok = s.literal("null")
	default:
		ok = s.number()
	}
	return span{start, s.pos}, ok
}

// object walks the object at pos (its '{' already peeked). For each member it calls
// member with the key's bytes (quotes removed; escaped when they hold a backslash, so
// that they need unquoting); member must consume the member's value.
func (s *scanner) object(member func(key []byte, escaped bool) bool) bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.pos++ // '{'
	if s.peek() == '}' {
		s.pos++
		s.depth--
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		key, escaped, ok := s.str()
		if !ok || s.peek() != ':' {
			return false
		}
		s.pos++
		if !member(key, escaped) {
			return false
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// array walks the array at pos (its '[' already peeked), calling element for each
// element by index; element must consume it.
func (s *scanner) array(element func(i int) bool) bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.pos++ // '['
	if s.peek() == ']' {
		s.pos++
		s.depth--
		return true
	}
	for i := 0; ; i++ {
		if !element(i) {
			return false
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// str moves past the string at pos and returns its content between the quotes.
func (s *scanner) str() (content []byte, escaped, ok bool) {
	d := s.data
	start := s.pos + 1
	for i := start; i < len(d); {
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return d[start:i], escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return nil, false, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			i++
		}
	}
	return nil, false, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return false
	}
	s.pos += len(lit)
	return true
}

// number moves past a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	end, ok := jsonnum.LiteralEnd(s.data, s.pos)
	if ok {
		s.pos = end
	}
	return ok
}

// compact appends raw, a valid JSON value, without the white space between tokens, as
// json.Compact does.
func compact(dst, raw []byte) []byte {
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			dst = append(dst, c)
			if c == '\\' {
				i++
				dst = append(dst, raw[i])
			} else if c == '"' {
				inString = false
			}
		case isSpace(c):
		default:
			dst = append(dst, c)
			inString = c == '"'
		}
	}
	return dst
}

// MetadataValues puts the raw JSON value of each of keys in the metadata object raw into
// out (nil when absent; the last one when a key repeats), in one scan and without
// building a map: meters read a few keys of every usage row. ok is false when raw is not
// a JSON object.
func MetadataValues(raw []byte, keys []string, out [][]byte) bool {
	clear(out)
	s := scanner{data: raw}
	if s.peek() != '{' {
		return false
	}
	return s.object(func(key []byte, escaped bool) bool {
		sp, ok := s.value()
		if !ok {
			return false
		}
		if escaped {
			key = []byte(keyName(key, escaped))
		}
		for i, k := range keys {
			if string(key) == k { // no allocation: a conversion in a comparison
				out[i] = raw[sp.start:sp.end]
			}
		}
		return true
	})
}

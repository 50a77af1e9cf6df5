package jsonnum

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Fault is a number of a JSON text that Check refuses.
type Fault struct {
	Path []Step // from the text's root to the number
	Len  int    // its plain decimal length; 0 when its exponent alone is too long
	Err  error  // ErrTooLong (or ErrNotNumber, on text that is not JSON)
}

// Step is one member name, or an array index when Index >= 0.
type Step struct {
	Key   string
	Index int
}

// Param names the number in the API's param style below root: root.deal.skus[1].price.
func (f *Fault) Param(root string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, s := range f.Path {
		if s.Index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// FirstFault finds the first number of the JSON text doc, in document order, that Check
// refuses; nil when every number passes. It is the §15 rule for free JSON a client sends
// (a filter test's payload), applied before anything is built from the text: one pass over
// the bytes, linear in len(doc) whatever the numbers hold, allocating only for the path
// of a fault. doc must be valid JSON (its decoder checked it): the syntax is not checked.
func FirstFault(doc []byte) *Fault {
	var stack []frame
	for i := 0; i < len(doc); {
		top := len(stack) - 1
		switch c := doc[i]; {
		case c == '{' || c == '[':
			stack = append(stack, frame{object: c == '{', wantKey: c == '{'})
			i++
		case c == '}' || c == ']':
			if top >= 0 {
				stack = stack[:top]
			}
			i++
		case c == ',' && top >= 0:
			if stack[top].object {
				stack[top].wantKey = true
			} else {
				stack[top].index++
			}
			i++
		case c == '"':
			end := stringEnd(doc, i)
			if top >= 0 && stack[top].object && stack[top].wantKey {
				stack[top].key, stack[top].wantKey = doc[i:end], false
			}
			i = end
		case c == '-' || isDigit(c):
			start := i
			for i < len(doc) && isNumberByte(doc[i]) {
				i++
			}
			n, err := TextLen(doc[start:i])
			if err == nil && n > MaxText {
				err = ErrTooLong
			}
			if err != nil {
				return &Fault{Path: pathOf(stack), Len: n, Err: err}
			}
		default: // white space, ':', true, false, null
			i++
		}
	}
	return nil
}

// frame is an object or array FirstFault is in: an object's current member name (its
// literal, quotes included) or an array's current index.
type frame struct {
	object  bool
	wantKey bool // the next string is a member name
	key     []byte
	index   int
}

// stringEnd is the index just past the string literal that starts at doc[i]: the next
// quote, found a run at a time, unless a backslash escapes it.
func stringEnd(doc []byte, i int) int {
	for i++; i < len(doc); {
		q := bytes.IndexByte(doc[i:], '"')
		if q < 0 {
			return len(doc)
		}
		b := bytes.IndexByte(doc[i:i+q], '\\')
		if b < 0 {
			return i + q + 1
		}
		i += b + 2 // the escaped byte cannot end the string
	}
	return len(doc)
}

func isNumberByte(c byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

func pathOf(stack []frame) []Step {
	path := make([]Step, 0, len(stack))
	for _, f := range stack {
		if !f.object {
			path = append(path, Step{Index: f.index})
			continue
		}
		var key string
		if json.Unmarshal(f.key, &key) != nil {
			key = string(f.key)
		}
		path = append(path, Step{Key: key, Index: -1})
	}
	return path
}

package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

// maxStringFaults bounds the faults listed for one body: a megabyte of bad strings must
// not make a megabyte of error.
const maxStringFaults = 20

// checkStrings applies the part of CONTRACT §15 that decoding hides: encoding/json
// turns invalid UTF-8 and lone surrogate escapes (\ud800) into U+FFFD without a word,
// and \u0000 into a NUL that PostgreSQL cannot store. So every string of the raw body,
// member names included, is checked here, once, and named by its path (skus[1].code).
// Control characters are the field rules' business (names refuse them, descriptions
// do not); syntax errors are left to decodeStrict.
func checkStrings(body []byte) error {
	if utf8.Valid(body) && !hasSuspectEscape(body) {
		return nil // the usual body: nothing to walk
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var (
		w    pathWalker
		fs   apperr.Faults
		prev int64
	)
	for len(fs) < maxStringFaults {
		tok, err := dec.Token()
		if err != nil {
			break // end of body, or a syntax error decodeStrict reports
		}
		end := dec.InputOffset()
		span := body[prev:end] // the token and the punctuation before it: all ASCII but strings
		prev = end
		s, isString := tok.(string)
		if !isString {
			w.next(tok)
			continue
		}
		reason := stringFault(span)
		if reason == nil {
			w.next(tok)
			continue
		}
		// The path is built only here, for a fault: rebuilding it for every token
		// costs depth × tokens.
		param := w.nextString(s)
		if param == "" {
			fs.Add("", textcheck.Code, "The body %v.", reason)
			continue
		}
		textcheck.AddFault(&fs, param, reason)
	}
	if len(fs) == 0 {
		return nil
	}
	return &apperr.ValidationError{Faults: fs}
}

// stringFault tells what is wrong with the string token whose JSON text ends span (the
// bytes before it are punctuation and whitespace, never a quote).
func stringFault(span []byte) error {
	lit := span[bytes.IndexByte(span, '"'):]
	content := lit[1 : len(lit)-1]
	return textcheck.JSONString(content, bytes.IndexByte(content, '\\') >= 0)
}

// hasSuspectEscape tells whether body holds a \u escape of NUL or of a surrogate half
// (\ud800–\udfff): the only escapes after which a decoded string can break the rule.
func hasSuspectEscape(body []byte) bool {
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`\u`))
		if j < 0 || i+j+6 > len(body) {
			return false
		}
		hex := bytes.ToLower(body[i+j+2 : i+j+6])
		if string(hex) == "0000" || (hex[0] == 'd' && bytes.IndexByte([]byte("89abcdef"), hex[1]) >= 0) {
			return true
		}
		i += j + 2
	}
}

// pathWalker follows json.Decoder tokens and names the member each one belongs to.
type pathWalker struct {
	stack []pathFrame
}

type pathFrame struct {
	object  bool
	key     string // object: the current member
	index   int    // array: the current element
	wantKey bool   // object: the next string is a member name
}

// next takes the next token.
func (w *pathWalker) next(tok json.Token) {
	top := len(w.stack) - 1
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{', '[':
			w.stack = append(w.stack, pathFrame{object: t == '{', wantKey: t == '{'})
		default:
			w.stack = w.stack[:top]
			w.valueDone()
		}
		return
	case string:
		if top >= 0 && w.stack[top].object && w.stack[top].wantKey {
			w.stack[top].key, w.stack[top].wantKey = t, false
			return
		}
	}
	w.valueDone()
}

// nextString takes the next token, the string s, and returns the param it belongs to:
// the member it is the value (or the name) of; "" for a top-level string.
func (w *pathWalker) nextString(s string) string {
	if w.atKey() {
		w.next(s)
		return w.path()
	}
	param := w.path()
	w.next(s)
	return param
}

// paramAt names the value of body that encoding/json reported a type error at: the
// error's Field leaves out array indexes (skus.quantity, not skus[1].quantity), and its
// Offset is useless behind a custom UnmarshalJSON (relative to the member's own bytes).
// So the param is the first value whose path without indexes is field and whose JSON
// kind is the one the error names ("number", "object", …); "" if none. Bodies reach it
// after checkNesting, so building a path per candidate stays linear.
func paramAt(body []byte, field, kind string) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var w pathWalker
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		k := jsonKindOf(tok)
		if _, isString := tok.(string); !(isString && w.atKey()) && k != "" && strings.HasPrefix(kind, k) {
			if p := w.path(); stripIndexes(p) == field {
				return p
			}
		}
		w.next(tok)
	}
}

// jsonKindOf is the kind encoding/json names in an UnmarshalTypeError's Value for a
// token that starts a value; "" for a closing delimiter.
func jsonKindOf(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return "object"
		case '[':
			return "array"
		}
		return ""
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// stripIndexes turns skus[1].quantity into skus.quantity.
func stripIndexes(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '[' {
			if j := strings.IndexByte(p[i:], ']'); j > 0 {
				i += j
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// atKey tells whether the next string is a member name.
func (w *pathWalker) atKey() bool {
	top := len(w.stack) - 1
	return top >= 0 && w.stack[top].object && w.stack[top].wantKey
}

// valueDone moves past a complete value: to the next member name or element.
func (w *pathWalker) valueDone() {
	if top := len(w.stack) - 1; top >= 0 {
		if w.stack[top].object {
			w.stack[top].wantKey = true
		} else {
			w.stack[top].index++
		}
	}
}

func (w *pathWalker) path() string {
	var b strings.Builder
	for _, f := range w.stack {
		switch {
		case f.object && f.wantKey:
			// between members: the object itself
		case f.object:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		default:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}

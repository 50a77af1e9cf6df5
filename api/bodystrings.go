package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/textcheck"
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
		param := w.next(tok)
		if !isString {
			continue
		}
		if reason := stringFault(s, span); reason != nil {
			if param == "" {
				fs.Add("", textcheck.Code, "The body %v.", reason)
				continue
			}
			fs.Add(param, textcheck.Code, "%s %v.", shown(param), reason)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	return &apperr.ValidationError{Faults: fs}
}

// stringFault tells what is wrong with a decoded string s given its raw JSON text span.
func stringFault(s string, span []byte) error {
	switch {
	case !utf8.Valid(span):
		return textcheck.ErrInvalidUTF8
	case strings.IndexByte(s, 0) >= 0:
		return textcheck.ErrNUL
	}
	// A U+FFFD the client did not write (raw or as \ufffd) stands for a lone surrogate.
	if n := strings.Count(s, "\uFFFD"); n > 0 {
		written := bytes.Count(span, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(span), []byte(`\ufffd`))
		if n > written {
			return textcheck.ErrInvalidUTF8
		}
	}
	return nil
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

// lineOK records an invalid_string fault unless s passes textcheck.Line (the rule of
// identifiers and enumerations), and tells whether it passed.
func lineOK(fs *apperr.Faults, param, s string) bool {
	if err := textcheck.Line(s); err != nil {
		fs.Add(param, textcheck.Code, "%s %v.", shown(param), err)
		return false
	}
	return true
}

// shown is param as a message names it: quoted when it holds what it is refused for (a
// member name with a control character), so the message shows the character.
func shown(param string) string {
	if textcheck.Line(param) != nil {
		return strconv.Quote(param)
	}
	return param
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

// next takes the next token and returns the param it belongs to: the member it is the
// value (or the name) of; "" for the top-level value.
func (w *pathWalker) next(tok json.Token) string {
	top := len(w.stack) - 1
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{', '[':
			param := w.path()
			w.stack = append(w.stack, pathFrame{object: t == '{', wantKey: t == '{'})
			return param
		default:
			w.stack = w.stack[:top]
			w.valueDone()
			return w.path()
		}
	case string:
		if top >= 0 && w.stack[top].object && w.stack[top].wantKey {
			w.stack[top].key, w.stack[top].wantKey = t, false
			return w.path()
		}
	}
	param := w.path()
	w.valueDone()
	return param
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
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	return b.String()
}

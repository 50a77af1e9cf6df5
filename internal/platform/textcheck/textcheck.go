// Package textcheck holds the string rule of CONTRACT §15 in one place, so that every
// edge (API, dashboard, usage decoder) refuses the same strings for the same reasons.
// PostgreSQL cannot store NUL in text or jsonb and refuses invalid UTF-8, so a string that
// passes here never turns into a 500 at the store.
package textcheck

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/apperr"
)

// Code is the CONTRACT §4 fault code for a string this package refuses.
const Code = "invalid_string"

// Reasons a string is refused; messages read after the field name ("name contains …").
var (
	ErrInvalidUTF8 = errors.New("is not valid UTF-8")
	ErrNUL         = errors.New("contains a NUL character")
	ErrControl     = errors.New("contains a control character")
)

// IsID tells whether s can be the id of an object: every id is a UUID in canonical
// form. The API and the dashboard answer a path or query id that cannot be one as they
// answer an unknown one, without a query.
func IsID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil
}

// Text checks free text (descriptions, metadata values, notes): valid UTF-8 and no NUL.
// Tabs, newlines and other control characters are allowed.
func Text(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return ErrNUL
		}
	}
	if !utf8.ValidString(s) {
		return ErrInvalidUTF8
	}
	return nil
}

// Line checks identifiers, names, emails, URLs and header values: valid UTF-8, no NUL and
// no other control character (C0 including tab and newline, DEL, and C1 U+0080–U+009F).
func Line(s string) error {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == 0:
				return ErrNUL
			case b < 0x20 || b == 0x7f:
				return ErrControl
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return ErrInvalidUTF8
		}
		if r >= 0x80 && r <= 0x9f {
			return ErrControl
		}
		i += size
	}
	return nil
}

// LineOK records an invalid_string fault unless s passes Line, and tells whether it
// passed. Callers check it first so that a field gets one fault, the one that says what
// is wrong.
func LineOK(fs *apperr.Faults, param, s string) bool {
	return ok(fs, param, Line(s))
}

// TextOK is LineOK for free text (Text: tabs and newlines allowed).
func TextOK(fs *apperr.Faults, param, s string) bool {
	return ok(fs, param, Text(s))
}

func ok(fs *apperr.Faults, param string, err error) bool {
	if err == nil {
		return true
	}
	AddFault(fs, param, err)
	return false
}

// AddFault records err, one of this package's reasons, as param's invalid_string fault.
// A param holding what it is refused for (a member name with a control character) is
// quoted, so that the message shows the character.
func AddFault(fs *apperr.Faults, param string, err error) {
	name := param
	if Line(name) != nil {
		name = strconv.Quote(name)
	}
	fs.Add(param, Code, "%s %v.", name, err)
}

// JSONString applies Text to the content of a JSON string literal (the bytes between its
// quotes, well-formed JSON: escapes complete, no raw control bytes) as PostgreSQL reads
// it: the bytes must be valid UTF-8 and no escape may be \u0000 or half of a surrogate
// pair (jsonb refuses both; encoding/json would quietly turn a half into U+FFFD). escaped
// tells whether content holds a backslash; without one there are no escapes to walk.
func JSONString(content []byte, escaped bool) error {
	if !utf8.Valid(content) {
		return ErrInvalidUTF8
	}
	if !escaped {
		return nil
	}
	for i := 0; i < len(content); i++ {
		if content[i] != '\\' {
			continue
		}
		if i++; content[i] != 'u' {
			continue // a one-letter escape, \\ included: skipped whole
		}
		r := hex4(content[i+1:])
		i += 4
		switch {
		case r == 0:
			return ErrNUL
		case r >= 0xdc00 && r <= 0xdfff:
			return ErrInvalidUTF8 // a low half without its high half
		case r >= 0xd800 && r <= 0xdbff:
			if i+6 >= len(content) || content[i+1] != '\\' || content[i+2] != 'u' {
				return ErrInvalidUTF8
			}
			if lo := hex4(content[i+3:]); lo < 0xdc00 || lo > 0xdfff {
				return ErrInvalidUTF8
			}
			i += 6
		}
	}
	return nil
}

// hex4 reads the four hex digits that follow \u in well-formed JSON.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		default:
			c = c | 0x20 - 'a' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Printable keeps text from elsewhere (a received body, an API answer) on its line or
// cell of a terminal: control characters (escape sequences that would retitle, clear or
// rewrite the terminal, newlines that would fake a line, tabs that would shift a table)
// and other characters that do not print become "?", and it is cut to max runes, "…"
// marking the cut.
func Printable(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Package textcheck holds the string rule of CONTRACT §15 in one place, so that every
// edge (API, dashboard, usage decoder) refuses the same strings for the same reasons.
// PostgreSQL cannot store NUL in text or jsonb and refuses invalid UTF-8, so a string that
// passes here never turns into a 500 at the store.
package textcheck

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/revops/revops/internal/apperr"
)

// Code is the CONTRACT §4 fault code for a string this package refuses.
const Code = "invalid_string"

// Reasons a string is refused; messages read after the field name ("name contains …").
var (
	ErrInvalidUTF8 = errors.New("is not valid UTF-8")
	ErrNUL         = errors.New("contains a NUL character")
	ErrControl     = errors.New("contains a control character")
)

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

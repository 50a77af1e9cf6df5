package textcheck

import (
	"errors"
	"testing"
)

func TestRules(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		line, txt error
	}{
		{"empty", "", nil, nil},
		{"plain", "acme-42", nil, nil},
		{"non-ASCII", "Zürich 東京 🎉", nil, nil},
		{"NUL", "a\x00b", ErrNUL, ErrNUL},
		{"invalid byte", "a\xffb", ErrInvalidUTF8, ErrInvalidUTF8},
		{"truncated rune", "a\xe6\x9d", ErrInvalidUTF8, ErrInvalidUTF8},
		{"overlong slash", "\xc0\xaf", ErrInvalidUTF8, ErrInvalidUTF8},
		{"surrogate half", "\xed\xa0\x80", ErrInvalidUTF8, ErrInvalidUTF8},
		{"tab", "a\tb", ErrControl, nil},
		{"newline", "a\nb", ErrControl, nil},
		{"escape", "a\x1b[31m", ErrControl, nil},
		{"DEL", "a\x7f", ErrControl, nil},
		{"C1 NEL", "a\u0085", ErrControl, nil},
		{"C1 end", "a\u009f", ErrControl, nil},
		{"after C1", "a\u00a0", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := Line(c.in); !errors.Is(err, c.line) {
				t.Errorf("Line(%q) = %v, want %v", c.in, err, c.line)
			}
			if err := Text(c.in); !errors.Is(err, c.txt) {
				t.Errorf("Text(%q) = %v, want %v", c.in, err, c.txt)
			}
		})
	}
}

// CONTRACT §15 for the reference decoder (reforig_test.go), written independently of
// hygiene.go: strings are checked with a regular expression over their escapes, numbers
// are written out in full and measured, metadata is walked with encoding/json's tokens.
package usage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/textcheck"
)

var refEscape = regexp.MustCompile(`\\(?:u([0-9a-fA-F]{4})|.)`)

// refStringFault checks a JSON string literal (quotes included) as PostgreSQL reads it.
func refStringFault(lit []byte) error {
	if !utf8.Valid(lit) {
		return textcheck.ErrInvalidUTF8
	}
	pendingHigh := -1 // end of an unpaired high surrogate escape
	for _, m := range refEscape.FindAllSubmatchIndex(lit, -1) {
		if m[2] < 0 { // not \u
			if pendingHigh >= 0 {
				return textcheck.ErrInvalidUTF8
			}
			continue
		}
		v, _ := strconv.ParseUint(string(lit[m[2]:m[3]]), 16, 32)
		switch {
		case pendingHigh >= 0 && (m[0] != pendingHigh || v < 0xdc00 || v > 0xdfff):
			return textcheck.ErrInvalidUTF8
		case pendingHigh >= 0:
			pendingHigh = -1
		case v == 0:
			return textcheck.ErrNUL
		case v >= 0xd800 && v <= 0xdbff:
			pendingHigh = m[1]
		case v >= 0xdc00 && v <= 0xdfff:
			return textcheck.ErrInvalidUTF8
		}
	}
	if pendingHigh >= 0 {
		return textcheck.ErrInvalidUTF8
	}
	return nil
}

// refPlain writes a JSON number out as PostgreSQL's numeric prints it; ok is false when its
// exponent has more than six significant digits.
func refPlain(lit string) (string, bool) {
	mant, exp, hasExp := strings.Cut(strings.ToLower(lit), "e")
	neg := strings.HasPrefix(mant, "-")
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(mant, "-"), ".")
	e := 0
	if hasExp {
		sign := 1
		if strings.HasPrefix(exp, "-") {
			sign = -1
		}
		digits := strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
		if len(digits) > 6 {
			return "", false
		}
		if digits != "" {
			e, _ = strconv.Atoi(digits)
		}
		e *= sign
	}
	all := intPart + frac
	point := len(intPart) + e
	var whole, fraction string
	switch {
	case point <= 0:
		whole, fraction = "0", strings.Repeat("0", -point)+all
	case point >= len(all):
		whole = all + strings.Repeat("0", point-len(all))
	default:
		whole, fraction = all[:point], all[point:]
	}
	if whole = strings.TrimLeft(whole, "0"); whole == "" {
		whole = "0"
	}
	out := whole
	if fraction != "" {
		out += "." + fraction
	}
	if neg && strings.Trim(all, "0") != "" {
		out = "-" + out
	}
	return out, true
}

// refFrame is an open container of a metadata walk.
type refFrame struct {
	array     bool
	index     int
	key       string
	expectKey bool
}

// refMetaCheck walks metadata in document order and returns the first §15 fault as
// (param, code, message), and how much longer storage prints its numbers.
func refMetaCheck(raw []byte, param string) (faultParam, code, msg string, grow int) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []refFrame
	path := func() string {
		var b strings.Builder
		b.WriteString(param)
		for _, f := range stack {
			if f.array {
				fmt.Fprintf(&b, "[%d]", f.index)
			} else {
				b.WriteString("." + f.key)
			}
		}
		return b.String()
	}
	beforeValue := func() {
		if n := len(stack); n > 0 && stack[n-1].array {
			stack[n-1].index++
		}
	}
	afterValue := func() {
		if n := len(stack); n > 0 && !stack[n-1].array {
			stack[n-1].expectKey = true
		}
	}
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", "", "", grow // the end (raw was validated)
		}
		after := dec.InputOffset()
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				beforeValue()
				stack = append(stack, refFrame{array: v == '[', index: -1, expectKey: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			seg := raw[before:after]
			lit := seg[bytes.IndexByte(seg, '"'):]
			top := &stack[len(stack)-1]
			isKey := !top.array && top.expectKey
			if isKey {
				top.key, top.expectKey = v, false
			} else {
				beforeValue()
			}
			if err := refStringFault(lit); err != nil {
				p := path()
				if isKey {
					return p, textcheck.Code, "The name of " + p + " " + err.Error() + ".", grow
				}
				return p, textcheck.Code, p + " " + err.Error() + ".", grow
			}
			if !isKey {
				afterValue()
			}
		case json.Number:
			beforeValue()
			plain, ok := refPlain(string(v))
			switch p := path(); {
			case !ok:
				return p, "invalid_number", p + " must be a finite number of at most 64 characters written out; its exponent has more than 6 digits.", grow
			case len(plain) > 64:
				return p, "invalid_number", fmt.Sprintf("%s must be a finite number of at most 64 characters written out in plain decimal (it has %d).", p, len(plain)), grow
			}
			grow += max(0, len(plain)-len(v))
			afterValue()
		default: // bool, nil
			beforeValue()
			afterValue()
		}
	}
}

// refKeyFaults returns the member names of the object obj whose spelling breaks CONTRACT
// §15, decoded as encoding/json decodes them (a name is bad if any spelling of it is).
func refKeyFaults(obj []byte) map[string]error {
	bad := map[string]error{}
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()              // 1e400 is no float64, and no reason to stop
	depth, expectKey := 0, false // expectKey: the next string at depth 1 is a member name
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return bad
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
				expectKey = depth == 1 && v == '{'
			} else {
				depth--
				expectKey = depth == 1
			}
		case string:
			if depth == 1 && expectKey {
				seg := obj[before:dec.InputOffset()]
				if err := refStringFault(seg[bytes.IndexByte(seg, '"'):]); err != nil && bad[v] == nil {
					bad[v] = err
				}
				expectKey = false
				continue
			}
			expectKey = depth == 1
		default:
			expectKey = depth == 1
		}
	}
}

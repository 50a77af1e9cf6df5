package usage

import (
	"strconv"
	"strings"

	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
)

// CONTRACT §15 inside the body: strings PostgreSQL can store, and numbers it does not
// blow up when it prints them. Everything here reads the bytes as scanned; nothing is
// decoded or written out to be checked.

// metaFault is the first value of a metadata object that breaks CONTRACT §15.
type metaFault struct {
	path []pathSeg // from the metadata object down to the value
	key  bool      // the member's name is at fault, not its value
	err  error     // textcheck.Err* or jsonnum.Err*
	n    int       // the number's length written out
}

// pathSeg is one step of a path: a member name as scanned, or an array index.
type pathSeg struct {
	key     []byte
	escaped bool
	index   int // -1 for a member
}

// param names the faulty value below the metadata param p: metadata.a.b[2].
func (f *metaFault) param(p param) string {
	var b strings.Builder
	b.WriteString(p.String())
	for _, s := range f.path {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		} else {
			b.WriteString("." + keyName(s.key, s.escaped))
		}
	}
	return b.String()
}

// message explains the fault for param name.
func (f *metaFault) message(name string) string {
	switch {
	case f.err == jsonnum.ErrTooLong && f.n == 0:
		return name + " must be a finite number of at most " + strconv.Itoa(jsonnum.MaxText) +
			" characters written out; its exponent has more than " + strconv.Itoa(jsonnum.MaxExponentDigits) + " digits."
	case f.err == jsonnum.ErrTooLong:
		return name + " must be a finite number of at most " + strconv.Itoa(jsonnum.MaxText) +
			" characters written out in plain decimal (it has " + strconv.Itoa(f.n) + ")."
	case f.key:
		return "The name of " + name + " " + f.err.Error() + "."
	}
	return name + " " + f.err.Error() + "."
}

// code is the CONTRACT §4 code of the fault.
func (f *metaFault) code() string {
	if f.err == jsonnum.ErrTooLong {
		return jsonnum.Code
	}
	return textcheck.Code
}

// metaWalk walks a metadata object the scanner already validated, stopping at the first
// fault. grow counts what storage adds when it prints numbers in full (PostgreSQL writes
// 1e3 as 1000), so that the size limit holds for what a read returns.
type metaWalk struct {
	s     scanner
	path  []pathSeg
	grow  int
	fault *metaFault
}

func checkMetadata(raw []byte) (grow int, fault *metaFault) {
	w := metaWalk{s: scanner{data: raw}}
	w.value()
	return w.grow, w.fault
}

func (w *metaWalk) fail(key bool, err error, n int) bool {
	w.fault = &metaFault{path: append([]pathSeg(nil), w.path...), key: key, err: err, n: n}
	return false
}

// value walks one value; false stops the walk (at a fault: the input is valid JSON).
func (w *metaWalk) value() bool {
	switch c := w.s.peek(); {
	case c == '{':
		return w.s.object(func(key []byte, escaped bool) bool {
			w.path = append(w.path, pathSeg{key: key, escaped: escaped, index: -1})
			if err := textcheck.JSONString(key, escaped); err != nil {
				return w.fail(true, err, 0)
			}
			ok := w.value()
			w.path = w.path[:len(w.path)-1]
			return ok
		})
	case c == '[':
		return w.s.array(func(i int) bool {
			w.path = append(w.path, pathSeg{index: i})
			ok := w.value()
			w.path = w.path[:len(w.path)-1]
			return ok
		})
	case c == '"':
		content, escaped, _ := w.s.str()
		if err := textcheck.JSONString(content, escaped); err != nil {
			return w.fail(false, err, 0)
		}
		return true
	case c == '-' || isDigit(c):
		start := w.s.pos
		w.s.number()
		lit := w.s.data[start:w.s.pos]
		n, err := jsonnum.TextLen(lit)
		if err == nil && n > jsonnum.MaxText {
			err = jsonnum.ErrTooLong
		}
		if err != nil {
			return w.fail(false, err, n)
		}
		w.grow += max(0, n-len(lit))
		return true
	}
	_, ok := w.s.value() // true, false, null
	return ok
}

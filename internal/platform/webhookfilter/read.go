package webhookfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
)

// jval is the filter's JSON as read, members in the order written (for the first fault in
// document order and a stable evaluation order), each value with its JSON Pointer.
type jval struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' boolean, 'z' null
	str  string
	b    bool
	obj  []member
	arr  []jval
	ptr  string
}

type member struct {
	key string
	val jval
}

// reader reads JSON tokens and checks each against the raw bytes it came from:
// encoding/json quietly turns invalid UTF-8 and half surrogates into U+FFFD, so the
// string rule (§15, textcheck.JSONString) is applied to the literal as sent.
type reader struct {
	dec      *json.Decoder
	raw      []byte
	off      int64
	maxDepth int
}

func readJSON(raw []byte, maxDepth int) (jval, error) {
	r := &reader{dec: json.NewDecoder(bytes.NewReader(raw)), raw: raw, maxDepth: maxDepth}
	r.dec.UseNumber()
	v, err := r.value(root, 0)
	if err != nil {
		return jval{}, err
	}
	if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
		return jval{}, fault(root, "has data after the filter object")
	}
	return v, nil
}

// token reads one token; a string's fault names ptr, prefixed by what (a key's fault names
// its object: the key itself is what cannot be written into a pointer).
func (r *reader) token(ptr, what string) (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		return nil, fault(ptr, "is not valid JSON")
	}
	end := r.dec.InputOffset()
	seg := r.raw[r.off:end]
	r.off = end
	if _, ok := t.(string); ok {
		lit := seg[bytes.IndexByte(seg, '"')+1 : bytes.LastIndexByte(seg, '"')]
		if err := textcheck.JSONString(lit, bytes.IndexByte(lit, '\\') >= 0); err != nil {
			msg := err.Error()
			if what != "" {
				msg = what + " " + msg
			}
			return nil, fault(ptr, msg)
		}
	}
	return t, nil
}

func (r *reader) value(ptr string, depth int) (jval, error) {
	t, err := r.token(ptr, "")
	if err != nil {
		return jval{}, err
	}
	v := jval{ptr: ptr}
	switch t := t.(type) {
	case json.Delim:
		if depth+1 > r.maxDepth {
			return jval{}, fault(ptr, "is nested more than "+strconv.Itoa(r.maxDepth)+" levels deep")
		}
		if t == '{' {
			v.kind = 'o'
			v.obj, err = r.object(ptr, depth+1)
		} else {
			v.kind = 'a'
			v.arr, err = r.array(ptr, depth+1)
		}
		if err != nil {
			return jval{}, err
		}
	case string:
		v.kind, v.str = 's', t
	case json.Number:
		if err := jsonnum.Check(string(t)); err != nil {
			return jval{}, fault(ptr, err.Error())
		}
		v.kind, v.str = 'n', string(t)
	case bool:
		v.kind, v.b = 'b', t
	case nil:
		v.kind = 'z'
	}
	return v, nil
}

func (r *reader) object(ptr string, depth int) ([]member, error) {
	var ms []member
	seen := map[string]bool{}
	for r.dec.More() {
		t, err := r.token(ptr, "has a key that")
		if err != nil {
			return nil, err
		}
		key, ok := t.(string)
		if !ok {
			return nil, fault(ptr, "is not valid JSON")
		}
		child := ptr + "/" + escape(key)
		if seen[key] {
			return nil, fault(child, "is given twice")
		}
		seen[key] = true
		v, err := r.value(child, depth)
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{key: key, val: v})
	}
	if _, err := r.token(ptr, ""); err != nil { // the closing brace
		return nil, err
	}
	return ms, nil
}

func (r *reader) array(ptr string, depth int) ([]jval, error) {
	var vs []jval
	for r.dec.More() {
		v, err := r.value(ptr+"/"+strconv.Itoa(len(vs)), depth)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if _, err := r.token(ptr, ""); err != nil { // the closing bracket
		return nil, err
	}
	return vs, nil
}

// escape writes a key as a JSON Pointer reference token (RFC 6901).
func escape(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

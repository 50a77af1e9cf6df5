package bodyfields

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Field is one member of a create or PATCH body, telling "absent" (leave as is) apart
// from "null" (clear) and a value.
type Field[T any] struct {
	Set   bool // present in the body
	Null  bool // present as null
	Value T
}

// Of is a present, non-null field; handy in tests and converters.
func Of[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

// UnmarshalJSON decodes strictly (unknown members rejected, numbers kept as json.Number),
// because the outer decoder's settings do not reach a custom unmarshaler.
func (f *Field[T]) UnmarshalJSON(b []byte) error {
	f.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		f.Null = true
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Value); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("unexpected data after value")
	}
	return nil
}

// MarshalJSON writes null or the value, so Inputs round-trip in tests.
func (f Field[T]) MarshalJSON() ([]byte, error) {
	if !f.Set || f.Null {
		return []byte("null"), nil
	}
	return json.Marshal(f.Value)
}

// Assign sets *dst from a nullable string field: absent leaves it, null clears it.
func Assign(dst **string, f Field[string]) {
	if !f.Set {
		return
	}
	if f.Null {
		*dst = nil
		return
	}
	v := f.Value
	*dst = &v
}

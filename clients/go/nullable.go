package revops

import (
	"bytes"
	"encoding/json"
)

// Nullable is a request-body member that may be left out, sent as null, or sent with a
// value: the optional fields whose value may be null, such as AccountUpdate.BillingEmail or
// DealUpdate.NetPrice. With PATCH, a member left out keeps its value and null clears it.
//
//	revops.AccountUpdate{
//		BillingEmail: revops.Value("billing@example.com"), // set it
//		Domain:       revops.Null[string](),              // clear it
//		// ExternalID left unset: not sent, unchanged
//	}
//
// The zero value is unset; its fields are tagged `json:",omitzero"` (Go 1.24), which calls
// IsZero, so an unset member is not sent. Marshaled on its own, an unset Nullable is null.
type Nullable[T any] struct {
	value T
	state nullState
}

type nullState uint8

const (
	unset nullState = iota
	null
	valued
)

// Value returns a Nullable holding v: the member is sent with that value.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: v, state: valued} }

// Null returns a Nullable that is sent as JSON null: revops.Null[string]().
func Null[T any]() Nullable[T] { return Nullable[T]{state: null} }

// Get returns the value and true when n holds one; the zero T and false when n is null or
// unset.
func (n Nullable[T]) Get() (T, bool) { return n.value, n.state == valued }

// IsNull says whether n is null (set, without a value).
func (n Nullable[T]) IsNull() bool { return n.state == null }

// IsZero says whether n is unset, so that `json:",omitzero"` leaves the member out.
func (n Nullable[T]) IsZero() bool { return n.state == unset }

// MarshalJSON writes the value, or null when n is null or unset.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.state != valued {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON reads null as null and anything else as a value; a member absent from the
// JSON leaves n unset.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Value(v)
	return nil
}

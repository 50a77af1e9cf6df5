// Package revops is the Go client of the Revops API.
//
// The types and one method per operation are generated from the OpenAPI document
// (zz_generated.go, by internal/generate: see the go:generate line below); this file
// and its neighbours are the hand-written layer around them: the client and its
// options, retries with one idempotency key per call, typed errors, iterators over
// paged lists and webhook verification.
package revops

//go:generate go run ./internal/generate -spec ../../api/openapi/openapi.json -out zz_generated.go

// Version is the client's version, sent in the User-Agent header.
const Version = "0.1.0"

// Ptr returns a pointer to v, for the optional fields of request bodies:
// &revops.AccountUpdate{Name: revops.Ptr("New name")}.
func Ptr[T any](v T) *T { return &v }

// String returns a pointer to s (as Stripe's client spells it).
func String(s string) *string { return &s }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

// Int64 returns a pointer to i.
func Int64(i int64) *int64 { return &i }

// Float64 returns a pointer to f.
func Float64(f float64) *float64 { return &f }

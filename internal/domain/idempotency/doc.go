// Package idempotency is CONTRACT §14 between the API and the store: the claim of a
// request's Idempotency-Key (waiting while its first request runs), and the Reply a
// change keeps in its own transaction. It sits above internal/store (which keeps the
// rows) and below the API (which reads the header), so that the API never names the
// store to answer an idempotent request, and so that the bytes kept in the transaction
// are rendered here, by Marshal, the encoder the API answers every request with — never
// by a closure of the API running inside a store transaction. See docs/idempotency.md.
package idempotency

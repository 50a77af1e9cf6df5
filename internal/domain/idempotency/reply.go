package idempotency

import (
	"fmt"

	"github.com/revops/revops/internal/store"
)

// Reply is how a change answers its request when the request has an Idempotency-Key
// (CONTRACT §14): the owned claim and the status the API chose for success. T is the
// answer, the response the API sends, made by the change's domain package (meters.Object,
// webhook.SecretObject…). The API builds the Reply and passes it down with the request;
// the business function that makes the change converts its result to T and calls Keep
// last in its transaction, which renders the answer with Marshal. Nothing of the API
// runs in that transaction. The zero Reply (no Idempotency-Key) keeps nothing.
type Reply[T any] struct {
	answer *Answer
	status int
}

// For answers with status and the answer the change keeps (nil a: no claim).
func For[T any](a *Answer, status int) Reply[T] {
	return Reply[T]{answer: a, status: status}
}

// Status is the success status the API chose: the first answer and its replays show it.
func (r Reply[T]) Status() int { return r.status }

// Keeps tells whether the request has an owned key whose answer the change must keep:
// a writer whose fast path needs no transaction takes it only when this is false.
func (r Reply[T]) Keeps() bool {
	if r.answer == nil {
		return false
	}
	_, _, kept := r.answer.Kept()
	return !kept
}

// Keep renders answer and keeps it as the request's answer in tx, the change's own
// transaction; call it last, just before the function returns and the transaction
// commits. A failed rendering or a lost claim fails the transaction, so nothing is
// changed without its answer.
func (r Reply[T]) Keep(tx *store.Tx, answer T) error {
	if !r.Keeps() {
		return nil
	}
	body, err := render(answer)
	if err != nil {
		return err
	}
	return r.answer.Keep(tx, r.status, body)
}

// KeepSecret is Keep for the answer of a change of endpoint endpointID whose signing
// secret is secret: kept without it (CONTRACT §17), a replay shows the secret then current.
func (r Reply[T]) KeepSecret(tx *store.Tx, answer T, endpointID, secret string) error {
	if !r.Keeps() {
		return nil
	}
	body, err := render(answer)
	if err != nil {
		return err
	}
	return r.answer.KeepSecret(tx, r.status, body, endpointID, secret)
}

// KeepSecretShown is KeepSecret for an answer that shows more now than its replays
// may: sent is the answer sent now, kept the one replays show (CONTRACT §25: custom
// header values, shown by the write that sets them, redacted in its replays).
func (r Reply[T]) KeepSecretShown(tx *store.Tx, sent, kept T, endpointID, secret string) error {
	if !r.Keeps() {
		return nil
	}
	sentBody, err := render(sent)
	if err != nil {
		return err
	}
	keptBody, err := render(kept)
	if err != nil {
		return err
	}
	return r.answer.KeepSecretShown(tx, r.status, sentBody, keptBody, endpointID, secret)
}

func render(answer any) ([]byte, error) {
	body, err := Marshal(answer)
	if err != nil {
		return nil, fmt.Errorf("render idempotent answer: %w", err)
	}
	return body, nil
}

package idempotency

import (
	"fmt"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Reply is how a change answers its request when the request has an Idempotency-Key
// (CONTRACT §14): the owned claim, the status the API chose for success and, when the
// answer is not the change's result itself, the named converter (of the result's domain
// package) that makes the response of it. The API builds it and passes it down with the
// request; the business function that makes the change calls Keep last in its
// transaction, which renders the answer with Marshal. The zero Reply (no
// Idempotency-Key) keeps nothing.
type Reply[T any] struct {
	answer *Answer
	status int
	view   func(T) any // nil: the result as it is
}

// EndpointReply is the Reply of a change of one webhook endpoint.
type EndpointReply = Reply[models.WebhookEndpoint]

// For answers with status and the change's result as it is (nil a: no claim).
func For[T any](a *Answer, status int) Reply[T] {
	return Reply[T]{answer: a, status: status}
}

// Via answers with status and view(result): view is the named converter of the result's
// domain package to the response the API sends.
func Via[T, R any](a *Answer, status int, view func(T) R) Reply[T] {
	return Reply[T]{answer: a, status: status, view: func(v T) any { return view(v) }}
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

// Keep renders result and keeps it as the request's answer in tx, the change's own
// transaction; call it last, just before the function returns and the transaction
// commits. A failed rendering or a lost claim fails the transaction, so nothing is
// changed without its answer.
func (r Reply[T]) Keep(tx *store.Tx, result T) error {
	if !r.Keeps() {
		return nil
	}
	body, err := r.render(result)
	if err != nil {
		return err
	}
	return r.answer.Keep(tx, r.status, body)
}

// KeepSecret is Keep for the answer of a change of endpoint endpointID whose signing
// secret is secret: kept without it (CONTRACT §17), a replay shows the secret then current.
func (r Reply[T]) KeepSecret(tx *store.Tx, result T, endpointID, secret string) error {
	if !r.Keeps() {
		return nil
	}
	body, err := r.render(result)
	if err != nil {
		return err
	}
	return r.answer.KeepSecret(tx, r.status, body, endpointID, secret)
}

func (r Reply[T]) render(result T) ([]byte, error) {
	var v any = result
	if r.view != nil {
		v = r.view(result)
	}
	body, err := Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("render idempotent answer: %w", err)
	}
	return body, nil
}

package store_test

import "github.com/revops/revops/internal/store"

// rawReply keeps the answer body renders, as it is: the store's tests check how an
// answer is kept, whatever renders it (internal/domain/idempotency.Reply in the API).
type rawReply[T any] struct {
	answer *store.Answer
	status int
	body   func(T) ([]byte, error)
}

// newReply is the answer of the claim a (nil: none) with status, rendered by body.
func newReply[T any](a *store.Answer, status int, body func(T) ([]byte, error)) rawReply[T] {
	return rawReply[T]{answer: a, status: status, body: body}
}

func (r rawReply[T]) Keeps() bool {
	if r.answer == nil {
		return false
	}
	_, _, kept := r.answer.Kept()
	return !kept
}

func (r rawReply[T]) Keep(tx *store.Tx, result T) error {
	if !r.Keeps() {
		return nil
	}
	body, err := r.body(result)
	if err != nil {
		return err
	}
	return r.answer.Keep(tx, r.status, body)
}

package meters

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// heldStore serves every environment's meter "calls" (its id the environment's), and holds
// environment A's figure reads until release is closed, saying on entered when one began.
type heldStore struct {
	Store
	entered chan string
	release chan struct{}
}

func (h *heldStore) Meter(_ context.Context, env models.Env, _ string) (models.Meter, error) {
	return models.Meter{ID: env.ID, Key: "calls", Aggregation: models.AggSum}, nil
}

func (h *heldStore) MeterAsOf(_ context.Context, _ models.Meter, now time.Time) (time.Time, error) {
	return now, nil
}

func (h *heldStore) MeterFigures(_ context.Context, q store.FigureQuery) ([]models.MeterFigure, error) {
	h.entered <- q.MeterID
	if q.MeterID == "A" {
		<-h.release
	}
	return nil, nil
}

// TestValuesQueriesPerEnvironment (CONTRACT §21): with MaxQueries 4, four queries of
// environment A in progress make A's fifth wait and then answer 429 rate_limited with a
// Retry-After, while environment B's query is answered and A's invalid one is still a 400.
func TestValuesQueriesPerEnvironment(t *testing.T) {
	st := &heldStore{entered: make(chan string, 16), release: make(chan struct{})}
	svc := &Queries{Store: st, MaxQueries: 4}
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	q := ValuesQuery{From: day, To: day.AddDate(0, 0, 1), Window: WindowHour}
	envA, envB := models.Env{ID: "A"}, models.Env{ID: "B"}
	held := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := svc.Values(context.Background(), envA, "calls", q, time.Now())
			held <- err
		}()
	}
	for range 4 {
		if id := <-st.entered; id != "A" {
			t.Fatalf("read of %s, want A's", id)
		}
	}

	_, err := svc.Values(context.Background(), envA, "calls", q, time.Now())
	var busy *apperr.BusyError
	if !errors.As(err, &busy) || busy.Code != apperr.CodeRateLimited || busy.RetryAfter <= 0 {
		t.Fatalf("A's fifth query: %v; want 429 rate_limited with a Retry-After", err)
	}
	bad := q
	bad.To = bad.From
	var inv *apperr.InvalidError
	if _, err := svc.Values(context.Background(), envA, "calls", bad, time.Now()); !errors.As(err, &inv) {
		t.Fatalf("A's invalid query while four run: %v; want 400, not 429", err)
	}
	if _, err := svc.Values(context.Background(), envB, "calls", q, time.Now()); err != nil {
		t.Fatalf("B's query while A's four run: %v", err)
	}
	if id := <-st.entered; id != "B" {
		t.Fatalf("read of %s, want B's", id)
	}

	close(st.release)
	for range 4 {
		if err := <-held; err != nil {
			t.Fatalf("A's held query: %v", err)
		}
	}
	if _, err := svc.Values(context.Background(), envA, "calls", q, time.Now()); err != nil {
		t.Fatalf("A's query once its four ended: %v", err)
	}
}

package usage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what usage needs of the database: the batch write with an answer to keep
// (InTx) and without one (WriteUsage), the batch a replay finds, and the reads.
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	WriteUsage(ctx context.Context, env models.Env, w store.UsageWrite) (models.UsageBatch, error)
	UsageBatch(ctx context.Context, env models.Env, txID string) (models.UsageBatch, error)
	UsageEvents(ctx context.Context, env models.Env, f store.UsageEventFilter, page store.Page) ([]models.UsageEvent, bool, error)
	UsageSummary(ctx context.Context, env models.Env, f store.UsageSummaryFilter) ([]models.UsageRollup, bool, error)
}

var _ Store = (*store.Store)(nil)

// Result tells what an ingest did.
type Result struct {
	Batch     models.UsageBatch // the stored batch: this one, or the original of a replay
	Duplicate bool
}

// Receipt is the answer to an accepted batch (CONTRACT §5). It is stored with the batch,
// so that a retry of the same transaction_id is answered with the same receipt
// (Duplicate set by the caller).
type Receipt struct {
	Object          string `json:"object"`
	TransactionID   string `json:"transaction_id"`
	Mode            string `json:"mode"`
	Environment     string `json:"environment"`
	MetricsAccepted int    `json:"metrics_accepted"`
	ReceivedAt      string `json:"received_at"`
	Duplicate       bool   `json:"duplicate"`
}

// StoredReceipt is an accepted batch's Receipt as stored with it: the answer of its
// first request and, kept by Save, of a retry with the same Idempotency-Key, byte for
// byte. An alias, so that it renders as the JSON it holds.
type StoredReceipt = json.RawMessage

// StoredReceipt is the answer to the batch accepted.
func (r Result) StoredReceipt() StoredReceipt { return StoredReceipt(r.Batch.Response) }

// Ingest decodes and validates a POST /v1/usage/events body received at now (every
// fault at once), then stores the batch, its events and their rollups (Save).
func Ingest(ctx context.Context, st Store, env models.Env, body []byte, now time.Time, reply idempotency.Reply[StoredReceipt]) (Result, error) {
	b, err := Decode(body, now)
	if err != nil {
		return Result{}, err
	}
	w, err := toWrite(&b, env, now)
	if err != nil {
		return Result{}, err
	}
	return Save(ctx, st, env, w, reply)
}

// Save stores a batch, its events and its rollups, all or nothing, with reply's answer
// (CONTRACT §14: the batch's StoredReceipt), or finds the batch already stored under its
// transaction_id (§5): same body hash, a duplicate (reply keeps nothing); another, 409
// transaction_id_reused.
//
// Ingest is the hot path (docs/benchmarks.md, "ingest"): a request without an answer to
// keep writes through the store alone (on PostgreSQL one statement, one round trip); one
// with an Idempotency-Key writes in a transaction that keeps the answer with the batch.
// The transaction id is the lock: the first writer claims it, a concurrent one waits for
// it and is refused, and then reads what the first one stored.
func Save(ctx context.Context, st Store, env models.Env, w store.UsageWrite, reply idempotency.Reply[StoredReceipt]) (Result, error) {
	var res Result
	var err error
	if !reply.Keeps() {
		res.Batch, err = st.WriteUsage(ctx, env, w)
	} else {
		_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
			b, err := tx.WriteUsage(w)
			if err != nil {
				return err
			}
			res.Batch = b
			return reply.Keep(tx, res.StoredReceipt())
		})
	}
	if errors.Is(err, store.ErrUsageBatchTaken) {
		return replay(ctx, st, env, w.Batch)
	}
	if err != nil {
		return Result{}, fmt.Errorf("ingest usage batch %s: %w", w.Batch.TransactionID, err)
	}
	return res, nil
}

// replay answers a transaction id that is already taken: the same body is a duplicate,
// another one a reuse of the id.
func replay(ctx context.Context, st Store, env models.Env, want models.UsageBatch) (Result, error) {
	got, err := st.UsageBatch(ctx, env, want.TransactionID)
	if err != nil {
		return Result{}, err
	}
	if got.BodyHash != want.BodyHash {
		return Result{}, apperr.Conflict("transaction_id_reused",
			"transaction_id %q was already used with a different request body; use a new transaction_id for new usage.", want.TransactionID)
	}
	return Result{Batch: got, Duplicate: true}, nil
}

// toWrite converts a valid batch into the rows the store writes.
func toWrite(b *Batch, env models.Env, now time.Time) (store.UsageWrite, error) {
	// Rendered as the API renders every answer, so that the stored receipt is byte for
	// byte what the first answer was.
	resp, err := idempotency.Marshal(Receipt{
		Object: "usage_event_batch", TransactionID: b.TransactionID, Mode: b.Mode, Environment: env.Name,
		MetricsAccepted: len(b.Metrics), ReceivedAt: now.Format(time.RFC3339Nano),
	})
	if err != nil {
		return store.UsageWrite{}, err
	}
	w := store.UsageWrite{
		Batch: models.UsageBatch{TransactionID: b.TransactionID, Mode: b.Mode, BodyHash: b.Hash(),
			Response: string(resp), MetricsCount: len(b.Metrics), ReceivedAt: now},
		Events: make([]models.UsageEvent, len(b.Metrics)),
	}
	for i := range b.Metrics {
		m := &b.Metrics[i]
		id, err := uuid.NewV7()
		if err != nil {
			return store.UsageWrite{}, err
		}
		w.Events[i] = models.UsageEvent{ID: id.String(), AccountID: m.AccountID, Product: m.Product,
			MetricName: m.MetricName, MetricValue: m.Value.String(), MetricResolution: m.Resolution,
			Metadata: string(m.Metadata), Timestamp: m.Timestamp}
	}
	rollups := Rollups(*b)
	w.Rollups = make([]models.UsageRollup, len(rollups))
	for i, r := range rollups {
		w.Rollups[i] = models.UsageRollup{AccountID: r.AccountID, Product: r.Product, MetricName: r.MetricName,
			Resolution: r.Resolution, PeriodStart: r.PeriodStart, Value: r.Value.String()}
	}
	return w, nil
}

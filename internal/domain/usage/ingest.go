package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what usage needs of the database.
type Store interface {
	IngestUsage(ctx context.Context, env models.Env, w store.UsageWrite, reply store.Keeper[store.UsageResult]) (store.UsageResult, error)
	UsageEvents(ctx context.Context, env models.Env, f store.UsageEventFilter, page store.Page) ([]models.UsageEvent, bool, error)
	UsageSummary(ctx context.Context, env models.Env, f store.UsageSummaryFilter) ([]models.UsageRollup, bool, error)
}

var _ Store = (*store.Store)(nil)

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

// Ingest decodes and validates a POST /v1/usage/events body received at now (every
// fault at once), then stores the batch, its events and their rollups in one
// transaction, or finds the batch already stored under its transaction_id. reply keeps
// the request's answer in that transaction (CONTRACT §14); a duplicate keeps none.
func Ingest(ctx context.Context, st Store, env models.Env, body []byte, now time.Time, reply idempotency.Reply[store.UsageResult]) (store.UsageResult, error) {
	b, err := Decode(body, now)
	if err != nil {
		return store.UsageResult{}, err
	}
	w, err := toWrite(&b, env, now)
	if err != nil {
		return store.UsageResult{}, err
	}
	return st.IngestUsage(ctx, env, w, reply)
}

// Events lists the environment's stored usage events, newest first.
func Events(ctx context.Context, st Store, env models.Env, f store.UsageEventFilter, page store.Page) ([]models.UsageEvent, bool, error) {
	return st.UsageEvents(ctx, env, f, page)
}

// Summary lists the environment's per-period rollups matching f.
func Summary(ctx context.Context, st Store, env models.Env, f store.UsageSummaryFilter) ([]models.UsageRollup, bool, error) {
	return st.UsageSummary(ctx, env, f)
}

// toWrite converts a valid batch into the rows the store writes.
func toWrite(b *Batch, env models.Env, now time.Time) (store.UsageWrite, error) {
	resp, err := marshalReceipt(Receipt{
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

// marshalReceipt encodes as the API renders (no HTML escaping, no trailing newline), so
// that the stored receipt is byte for byte what the first answer was.
func marshalReceipt(r Receipt) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Package meters turns an environment's usage rows into billable figures (CONTRACT §18):
// meter definitions, the consumer that counts every accepted usage row into every meter
// of its environment exactly once, the backfill of a new meter's older rows, and the
// values read from the kept figures.
package meters

import (
	"context"
	"log/slog"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what meters need of the database.
type Store interface {
	CreateMeter(ctx context.Context, env store.Env, m models.Meter, now time.Time, reply store.Reply[models.Meter]) (models.Meter, error)
	Meters(ctx context.Context, env store.Env, page store.Page) ([]models.Meter, bool, error)
	Meter(ctx context.Context, env store.Env, key string) (models.Meter, error)
	UpdateMeterDescription(ctx context.Context, env store.Env, key, description string, now time.Time, reply store.Reply[models.Meter]) (models.Meter, error)
	DeleteMeter(ctx context.Context, env store.Env, key string, reply store.Reply[models.Meter]) (models.Meter, error)
	PurgeMeterFigures(ctx context.Context, meterID string) error
	WaitingUsageEnvironments(ctx context.Context, limit int) ([]string, error)
	ConsumeUsage(ctx context.Context, envID string, maxRows int, apply store.MeterApply) (int, error)
	BackfillMeterPage(ctx context.Context, meterID string, maxRows int, now time.Time, apply store.MeterApply) (done bool, rows int, err error)
	MeterAsOf(ctx context.Context, m models.Meter, now time.Time) (time.Time, error)
	MeterFigures(ctx context.Context, q store.FigureQuery) ([]models.MeterFigure, error)
}

var _ Store = (*store.Store)(nil)

// BackfillStarter starts a meter's MeterBackfill workflow (dispatch.MeterBackfills).
type BackfillStarter interface {
	StartMeterBackfill(ctx context.Context, m models.Meter) error
}

// Definition is a meter as POST /v1/meters defines it, checked (DecodeCreate).
type Definition struct {
	Key         string
	Description string
	MetricName  string   // filter.metric_name
	Product     string   // filter.product; "" = any
	Aggregation string   // models.Agg*
	ValueKey    string   // unique_count only
	GroupBy     []string // 0..3 metadata keys
}

// Service serves meters to the API and the dashboard.
type Service struct {
	Store Store
	// Backfills starts a new meter's backfill right after its creation commits, off the
	// request path; nil (or a failed start) leaves it to the sweeper.
	Backfills BackfillStarter
	Log       *slog.Logger
	// MaxQueries is how many values queries of one environment run at once in this
	// process (cfg.MeterQueries, CONTRACT §21); the next waits up to QueryWait, then is
	// refused 429 rate_limited. 0: no bound.
	MaxQueries int
	queries    queryGate
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// startTimeout bounds the start of a backfill right after a creation.
const startTimeout = 10 * time.Second

// Create records a meter; one with rows to backfill is handed to Backfills after commit.
func (s *Service) Create(ctx context.Context, env store.Env, d Definition, now time.Time, reply store.Reply[models.Meter]) (models.Meter, error) {
	m, err := s.Store.CreateMeter(ctx, env, models.Meter{
		Key: d.Key, Description: d.Description, FilterMetricName: d.MetricName, FilterProduct: d.Product,
		Aggregation: d.Aggregation, ValueKey: d.ValueKey, GroupBy: d.GroupBy,
	}, now, reply)
	if err != nil {
		return m, err
	}
	if m.Status == models.MeterBackfilling && s.Backfills != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
			defer cancel()
			if err := s.Backfills.StartMeterBackfill(ctx, m); err != nil {
				s.log().Warn("meter backfill not started; the sweeper will", "meter_id", m.ID, "err", err)
			}
		}()
	}
	return m, nil
}

// List lists an environment's meters, newest first.
func (s *Service) List(ctx context.Context, env store.Env, page store.Page) ([]models.Meter, bool, error) {
	return s.Store.Meters(ctx, env, page)
}

// Get finds a meter by key.
func (s *Service) Get(ctx context.Context, env store.Env, key string) (models.Meter, error) {
	return s.Store.Meter(ctx, env, key)
}

// SetDescription changes a meter's description, the one field PATCH changes.
func (s *Service) SetDescription(ctx context.Context, env store.Env, key, description string, now time.Time, reply store.Reply[models.Meter]) (models.Meter, error) {
	return s.Store.UpdateMeterDescription(ctx, env, key, description, now, reply)
}

// Delete stops a meter and removes its figures: the meter at once, its figures right
// after (store.DeleteMeter says why apart). A purge that fails leaves rows nothing reads;
// the meter is deleted all the same.
func (s *Service) Delete(ctx context.Context, env store.Env, key string, reply store.Reply[models.Meter]) (models.Meter, error) {
	m, err := s.Store.DeleteMeter(ctx, env, key, reply)
	if err != nil {
		return m, err
	}
	if err := s.Store.PurgeMeterFigures(context.WithoutCancel(ctx), m.ID); err != nil {
		s.log().Warn("deleted meter's figures not purged; they are never read", "meter_id", m.ID, "err", err)
	}
	return m, nil
}

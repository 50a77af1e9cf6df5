package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/revops/revops/models"
)

// MeterAsOf is the time before which every accepted usage row is counted in m's figures
// (CONTRACT §18): the receipt time of the oldest batch the consumer has not taken (a
// batch applied in parts is not taken until its last part), or, while m backfills, of
// the oldest batch its backfill has not counted (kept on m by each page: the same cost
// as when m is ready, §21), or now when there is none.
func (s *Store) MeterAsOf(ctx context.Context, m models.Meter, now time.Time) (time.Time, error) {
	asOf := now.UTC()
	var oldest []time.Time
	if err := s.db.WithContext(ctx).Raw(`SELECT received_at FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY received_at LIMIT 1`,
		m.EnvironmentID).Scan(&oldest).Error; err != nil {
		return asOf, fmt.Errorf("oldest waiting usage batch: %w", err)
	}
	if m.Status == models.MeterBackfilling && m.BackfillAsOf != nil {
		oldest = append(oldest, *m.BackfillAsOf)
	}
	for _, t := range oldest {
		if !t.IsZero() && t.Before(asOf) {
			asOf = t.UTC()
		}
	}
	return asOf, nil
}

// FigureQuery selects kept figures of one meter and kind: window starts in [From, To),
// one account or all, and group values (index into the meter's group_by → canonical text).
// Figures come in the order of their key: window start, then account and group compared
// bytewise (as Go compares strings); After and Until bound that order, so that a reader
// pages through a range in chunks, each chunk read through an index in that order
// (migration 92), never sorted from the whole range (CONTRACT §21).
type FigureQuery struct {
	MeterID   string
	Kind      string
	From, To  time.Time
	AccountID string
	Filters   map[int]string
	Limit     int // at most this many figures; 0 = all
	// After, when set, keeps the figures after it; Until, the figures up to it (itself
	// included). Kind is ignored in both. An empty AccountID or Groups sorts before every
	// stored one (neither is ever empty).
	After, Until *FigureKey
}

// MeterFigures reads the figures q selects, ordered by window start, account and group.
func (s *Store) MeterFigures(ctx context.Context, q FigureQuery) (_ []models.MeterFigure, err error) {
	ctx, end := s.span(ctx, "db meter figures")
	defer end(&err)
	db := s.db.WithContext(ctx).Table("meter_figures AS f").Select(figureColumns).
		Where("meter_id = ? AND kind = ? AND window_start >= ? AND window_start < ?", q.MeterID, q.Kind, q.From, q.To)
	if q.AccountID != "" {
		db = db.Where("account_id = ?", q.AccountID)
	}
	for i, v := range q.Filters {
		db = db.Where(fmt.Sprintf("g%d = ?", i+1), v)
	}
	// Bytewise, so that SQL's order and Go's agree: PostgreSQL's default collation orders
	// text by language rules; SQLite's BINARY is bytewise already. The row comparison is
	// an index condition of meter_figures_order and meter_figures_g* (migration 92), whose
	// text columns are collated "C" too: a chunk reads just its rows.
	key := figureOrderSQLite
	if s.dialect == "postgres" {
		key = figureOrderPG
	}
	if a := q.After; a != nil {
		db = db.Where("window_start >= ? AND "+key+" > (?, ?, ?)", a.WindowStart, a.WindowStart, a.AccountID, a.Groups)
	}
	if u := q.Until; u != nil {
		db = db.Where("window_start <= ? AND "+key+" <= (?, ?, ?)", u.WindowStart, u.WindowStart, u.AccountID, u.Groups)
	}
	if q.Limit > 0 {
		db = db.Limit(q.Limit)
	}
	return scanFigures(db.Order(strings.Trim(key, "()")).Rows())
}

package meterstest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MinuteFigures describes hour figures loaded straight into meter_figures (PostgreSQL), as
// the consumer would have kept them, for tests and benchmarks of values queries over many
// series (CONTRACT §21) without ingesting millions of usage rows: Series series (account
// acct_NNNN of Series/3 accounts, group region r0, r1 or r2), Hours hours from Start, the
// series s holding a figure in minute m of hour h when (s+m)%Every == 0, of value
// MinuteValue(s, h, m).
type MinuteFigures struct {
	MeterID       string
	Start         time.Time
	Hours, Series int
	Every         int
}

// MinuteValue is the figure of series s in minute m of hour h: exact decimal text.
func MinuteValue(s, h, m int) string {
	return fmt.Sprintf("%d.%02d", (s*31+h*7+m)%1000, (s+m)%100)
}

// Account and Region name series s.
func Account(s int) string { return fmt.Sprintf("acct_%04d", s/3) }
func Region(s int) string  { return fmt.Sprintf("r%d", s%3) }

// Load inserts the figures of f (meter group_by: region) at the PostgreSQL url.
func (f MinuteFigures) Load(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// The same formula as MinuteValue, per minute; the hour's value is their sum.
	_, err = conn.Exec(ctx, `
INSERT INTO meter_figures (meter_id, kind, window_start, account_id, groups, g1, value, slots)
SELECT $1, 'hour', $2::timestamptz + h * interval '1 hour', 'acct_' || lpad((s / 3)::text, 4, '0'),
	'["r' || s % 3 || '"]', 'r' || s % 3, x.total::text, x.slots
FROM generate_series(0, $3 - 1) h, generate_series(0, $4 - 1) s,
LATERAL (SELECT string_agg(m || '=' || v, ';' ORDER BY m) AS slots, sum(v::numeric) AS total
	FROM (SELECT m, ((s * 31 + h * 7 + m) % 1000) || '.' || lpad(((s + m) % 100)::text, 2, '0') AS v
		FROM generate_series(0, 59) m WHERE (s + m) % $5 = 0) mv) x
WHERE x.slots IS NOT NULL`, f.MeterID, f.Start, f.Hours, f.Series, f.Every)
	if err != nil {
		return fmt.Errorf("load minute figures: %w", err)
	}
	_, err = conn.Exec(ctx, `ANALYZE meter_figures`)
	return err
}

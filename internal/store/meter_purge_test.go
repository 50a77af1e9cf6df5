package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// figureRows is the figure rows seedFigures gives a meter: 5 series and 3 values, a member
// day for each series, value and of 4 days, and 50 window figures.
const figureRows = 5 + 3 + 5*3*4 + 50

// seedFigures writes a unique_count meter's kept rows in every table a purge empties.
func seedFigures(t *testing.T, st *store.Store, meterID string) {
	t.Helper()
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := st.ExecForTest(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		exec(`INSERT INTO meter_series (meter_id, account_id, groups) VALUES (?, ?, '[]')`, meterID, fmt.Sprint("acct-", i))
	}
	for i := range 3 {
		exec(`INSERT INTO meter_values (meter_id, value) VALUES (?, ?)`, meterID, fmt.Sprint("user-", i))
	}
	exec(`INSERT INTO meter_member_days (series, member, day, minutes)
		SELECT s.id, v.id, d.day, '0' FROM meter_series s JOIN meter_values v ON v.meter_id = s.meter_id
		CROSS JOIN (SELECT 20000 AS day UNION ALL SELECT 20001 UNION ALL SELECT 20002 UNION ALL SELECT 20003) d
		WHERE s.meter_id = ?`, meterID)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		exec(`INSERT INTO meter_figures (meter_id, kind, window_start, account_id, groups, value) VALUES (?, 'hour', ?, 'acct-0', '[]', '1')`,
			meterID, start.Add(time.Duration(i)*time.Hour))
	}
}

// meterRows counts a meter's rows in every table a purge empties.
func meterRows(t *testing.T, st *store.Store, meterID string) int64 {
	t.Helper()
	n, err := st.TestCount(context.Background(), `SELECT
		(SELECT COUNT(*) FROM meter_member_days d JOIN meter_series s ON s.id = d.series WHERE s.meter_id = ?) +
		(SELECT COUNT(*) FROM meter_series WHERE meter_id = ?) + (SELECT COUNT(*) FROM meter_values WHERE meter_id = ?) +
		(SELECT COUNT(*) FROM meter_figures WHERE meter_id = ?)`, meterID, meterID, meterID, meterID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func createMeter(t *testing.T, db seeded, key string) (models.Meter, error) {
	t.Helper()
	return meters.Create(context.Background(), db.st, db.env, meters.Definition{Key: key, MetricName: "calls",
		Aggregation: models.AggUniqueCount, ValueKey: "user"}, time.Now(), idempotency.Reply[meters.Object]{})
}

// CONTRACT §21: deleting a meter removes it at once and records its purge, leaving its
// figures; each purge page deletes at most its bound, never leaves a member day whose
// series is gone (member days go first), says "more may be left" only with a full page,
// and the pages together delete every figure of the deleted meter and none of another's.
func TestMeterPurgePagesAreBounded(t *testing.T) {
	const page = 25
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		gone, err := createMeter(t, db, "gone")
		if err != nil {
			t.Fatal(err)
		}
		kept, err := createMeter(t, db, "kept")
		if err != nil {
			t.Fatal(err)
		}
		seedFigures(t, db.st, gone.ID)
		seedFigures(t, db.st, kept.ID)
		if _, err := meters.Delete(ctx, db.st, db.env, "gone", idempotency.Reply[meters.Deleted]{}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.st.Meter(ctx, db.env, "gone"); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("deleted meter read: %v, want not found", err)
		}
		if n := meterRows(t, db.st, gone.ID); n != figureRows {
			t.Fatalf("%d rows right after the delete, want all %d left for the purge", n, figureRows)
		}
		purges, err := db.st.UnstartedPurges(ctx, time.Now().Add(time.Minute), 10)
		if err != nil || len(purges) != 1 || purges[0].MeterID != gone.ID || purges[0].EnvironmentID != db.env.ID ||
			purges[0].OrganizationID != db.env.OrganizationID || purges[0].MeterKey != "gone" {
			t.Fatalf("unstarted purges %+v (err %v), want the deleted meter's", purges, err)
		}
		total, pages := 0, 0
		for {
			before := meterRows(t, db.st, gone.ID)
			n, err := db.st.PurgeMeterPage(ctx, gone.ID, page)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if n > page || int64(n) != before-meterRows(t, db.st, gone.ID) {
				t.Fatalf("page %d deleted %d (the count fell from %d to %d), want at most %d, as counted", pages, n, before,
					meterRows(t, db.st, gone.ID), page)
			}
			orphans, err := db.st.TestCount(ctx, `SELECT COUNT(*) FROM meter_member_days d WHERE NOT EXISTS (SELECT 1 FROM meter_series s WHERE s.id = d.series)`)
			if err != nil || orphans != 0 {
				t.Fatalf("after page %d: %d member days whose series is gone (err %v)", pages, orphans, err)
			}
			total += n
			if n < page {
				break
			}
		}
		if total != figureRows || pages != figureRows/page+1 || meterRows(t, db.st, gone.ID) != 0 {
			t.Fatalf("%d pages deleted %d rows, %d left; want %d pages, %d rows, none left", pages, total,
				meterRows(t, db.st, gone.ID), figureRows/page+1, figureRows)
		}
		if n := meterRows(t, db.st, kept.ID); n != figureRows {
			t.Fatalf("the kept meter has %d rows, want its %d", n, figureRows)
		}
		if n, err := db.st.PurgeMeterPage(ctx, gone.ID, page); err != nil || n != 0 {
			t.Fatalf("a page after the end deleted %d (%v)", n, err)
		}
		for range 2 { // a retried end is no error
			if err := db.st.EndMeterPurge(ctx, gone.ID); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := db.st.TestCount(ctx, `SELECT COUNT(*) FROM meter_purges`); err != nil || n != 0 {
			t.Fatalf("%d purge rows after the end (err %v)", n, err)
		}
	})
}

// CONTRACT §21: a deleted meter's key is free at once, but until its purge ends it holds
// its slot among the environment's 32 (§18): a 33rd slot is 400 too_many_meters, and the
// end of the purge frees it.
func TestMeterPurgesCountTowardTheLimit(t *testing.T) {
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		for i := range meters.MaxMeters - 1 {
			if _, err := createMeter(t, db, fmt.Sprint("m", i)); err != nil {
				t.Fatal(err)
			}
		}
		gone, err := meters.Delete(ctx, db.st, db.env, "m0", idempotency.Reply[meters.Deleted]{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := createMeter(t, db, "m0"); err != nil {
			t.Fatalf("re-creating the deleted key: %v", err)
		}
		_, err = createMeter(t, db, "one-more")
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.Code != meters.CodeTooManyMeters {
			t.Fatalf("a meter beside 31 meters and a purge awaiting: %v, want %s", err, meters.CodeTooManyMeters)
		}
		if err := db.st.EndMeterPurge(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := createMeter(t, db, "one-more"); err != nil {
			t.Fatalf("a meter once the purge ended: %v", err)
		}
	})
}

// The purge sweeper's rows: a purge is unstarted until marked, once.
func TestMeterPurgeMarkedStarted(t *testing.T) {
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		m, err := createMeter(t, db, "gone")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := meters.Delete(ctx, db.st, db.env, "gone", idempotency.Reply[meters.Deleted]{}); err != nil {
			t.Fatal(err)
		}
		if ps, err := db.st.UnstartedPurges(ctx, time.Now().Add(-time.Minute), 10); err != nil || len(ps) != 0 {
			t.Fatalf("purges older than a minute: %+v (%v), want none", ps, err)
		}
		if err := db.st.MarkPurgeStarted(ctx, m.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if ps, err := db.st.UnstartedPurges(ctx, time.Now().Add(time.Minute), 10); err != nil || len(ps) != 0 {
			t.Fatalf("unstarted purges after the mark: %+v (%v), want none", ps, err)
		}
	})
}

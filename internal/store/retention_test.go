package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Retention deletes, in batches, events older than the cutoff with their deliveries,
// attempts and stats rollups, finished replay jobs as old, and expired idempotency records; newer rows, an
// event with an unfinished delivery, a replay job still running, and usage of any age stay.
func TestPurgeInBatches(t *testing.T) {
	now := time.Now().UTC()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-24*time.Hour)
	cutoff := now.Add(-30 * 24 * time.Hour) // a shortened retention would do the same
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		exec := func(sql string, args ...any) {
			t.Helper()
			if err := st.ExecForTest(ctx, sql, args...); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		event := func(id string, at time.Time) {
			exec(`INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id,
					time, payload, status, seq, created_at, updated_at)
					VALUES (?, ?, ?, 'live', 'deal-created', 'deal', 'deal_1', '', '{}', 'delivered', 1, ?, ?)`,
				id, env.OrganizationID, env.ID, at, at)
			exec(`INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status, retry_initial_interval_ms,
					retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, created_at, updated_at)
					VALUES (?, ?, ?, 'we_1', 'delivered', 1, 1, 1, 1, ?, ?)`, "del_"+id, id, env.ID, at, at)
			exec(`INSERT INTO delivery_attempts (id, event_id, environment_id, number, trigger, started_at, outcome, created_at)
					VALUES (?, ?, ?, 1, 'initial', ?, 'delivered', ?)`, "att_"+id, id, env.ID, at, at)
		}
		for i := range 5 {
			event(fmt.Sprintf("evt_old%d", i), old.Add(time.Duration(i)*time.Minute))
		}
		event("evt_new0", recent)
		event("evt_new1", cutoff.Add(time.Minute))
		// An old event whose delivery still waits in its order lane (CONTRACT §26) stays.
		event("evt_waiting", old)
		exec(`UPDATE webhook_deliveries SET status = 'pending', ordered = TRUE, waiting_for = 'evt_x' WHERE event_id = 'evt_waiting'`)
		// Stats rollups go with the attempts they count: the hours that ended before
		// the cutoff's hour began; the cutoff's own hour may count newer attempts.
		rollup := func(hour time.Time) {
			exec(`INSERT INTO endpoint_stat_rollups (environment_id, endpoint_id, hour_start, shard, attempts, succeeded)
					VALUES (?, 'we_1', ?, 0, 1, 1)`, env.ID, hour.UTC().Truncate(time.Hour))
		}
		for i := range 3 {
			rollup(old.Add(time.Duration(i) * time.Hour))
		}
		rollup(cutoff)
		rollup(recent)
		job := func(id, status string, at time.Time) {
			exec(`INSERT INTO replay_jobs (id, organization_id, environment_id, status, created_before, heartbeat_at, created_at, updated_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, env.OrganizationID, env.ID, status, at, at, at, at)
		}
		job("rj_old_done", "completed", old)
		job("rj_old_running", "running", old)
		job("rj_new_done", "completed", recent)
		key := func(k string, expires time.Time) {
			exec(`INSERT INTO idempotency_keys (environment_id, idempotency_key, method, path, fingerprint, claim, claimed_at, expires_at, created_at)
					VALUES (?, ?, 'POST', '/v1/deals', 'f', 'c', ?, ?, ?)`, env.ID, k, expires.Add(-24*time.Hour), expires, expires.Add(-24*time.Hour))
		}
		key("k_expired", now.Add(-time.Hour))
		key("k_expired2", now.Add(-48*time.Hour))
		key("k_live", now.Add(23*time.Hour))
		exec(`INSERT INTO usage_events (id, environment_id, batch_seq, transaction_id, mode, account_id, product, metric_name,
				metric_value, metric_resolution, metadata, timestamp, received_at, created_at)
				VALUES ('use_old', ?, 1, 't', 'increment', 'acct_1', 'p', 'm', 1, 'sum', '{}', ?, ?, ?)`, env.ID, old.AddDate(-1, 0, 0), old.AddDate(-1, 0, 0), old.AddDate(-1, 0, 0))

		// Batches of 2 over 5 old events: 2, 2, 1 — the short one says nothing is left.
		var batches []int
		deleted := map[string]int64{}
		for {
			p, err := st.PurgeEvents(ctx, cutoff, 2)
			if err != nil {
				t.Fatal(err)
			}
			batches = append(batches, p.Rows)
			for k, v := range p.Deleted {
				deleted[k] += v
			}
			if p.Rows < 2 {
				break
			}
		}
		if fmt.Sprint(batches) != "[2 2 1]" {
			t.Errorf("batches %v, want [2 2 1]", batches)
		}
		if fmt.Sprint(deleted) != "map[delivery_attempts:5 endpoint_stat_rollups:3 events:5 webhook_deliveries:5]" {
			t.Errorf("deleted %v", deleted)
		}
		p, err := st.PurgeReplayJobs(ctx, cutoff, 1000)
		if err != nil || p.Rows != 1 {
			t.Errorf("replay jobs purged %d, %v; want 1", p.Rows, err)
		}
		p, err = st.PurgeIdempotencyKeys(ctx, now, 1)
		if err != nil || p.Rows != 1 {
			t.Errorf("first idempotency batch of 1: %d, %v", p.Rows, err)
		}
		p, err = st.PurgeIdempotencyKeys(ctx, now, 1000)
		if err != nil || p.Rows != 1 {
			t.Errorf("second idempotency batch: %d, %v; want the other expired key", p.Rows, err)
		}

		for _, c := range []struct {
			what, sql string
			want      int64
		}{
			{"events left", "SELECT COUNT(*) FROM events", 3},
			{"new and unfinished events left", "SELECT COUNT(*) FROM events WHERE id IN ('evt_new0', 'evt_new1', 'evt_waiting')", 3},
			{"deliveries left", "SELECT COUNT(*) FROM webhook_deliveries", 3},
			{"attempts left", "SELECT COUNT(*) FROM delivery_attempts", 3},
			{"replay jobs left", "SELECT COUNT(*) FROM replay_jobs WHERE id IN ('rj_old_running', 'rj_new_done')", 2},
			{"replay jobs", "SELECT COUNT(*) FROM replay_jobs", 2},
			{"idempotency keys left", "SELECT COUNT(*) FROM idempotency_keys WHERE idempotency_key = 'k_live'", 1},
			{"idempotency keys", "SELECT COUNT(*) FROM idempotency_keys", 1},
			{"stats rollups left", "SELECT COUNT(*) FROM endpoint_stat_rollups", 2},
			{"usage (never purged)", "SELECT COUNT(*) FROM usage_events", 1},
		} {
			if n, err := st.TestCount(ctx, c.sql); err != nil || n != c.want {
				t.Errorf("%s: %d (%v), want %d", c.what, n, err, c.want)
			}
		}
		// Nothing older is left: a further batch deletes nothing.
		if p, err := st.PurgeEvents(ctx, cutoff, 2); err != nil || p.Rows != 0 {
			t.Errorf("purge after all old events went: %+v, %v", p, err)
		}
	})
}

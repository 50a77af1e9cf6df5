package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// LanePlan is what one EXPLAIN (ANALYZE) of a lane read did on webhook_deliveries:
// the rows its scans read (returned and filtered out, times their loops), its time, and
// how it read the table (one "scan type on index" a scan node).
type LanePlan struct {
	Rows  int64
	Ms    float64
	Scans []string
}

// The statements migration 138 and the lane walk replaced (the baseline).
const (
	oldStuckLanesSQL = `SELECT DISTINCT e.organization_id, d.environment_id, env.name AS environment, d.endpoint_id, d.object_id
	FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
	JOIN environments env ON env.id = d.environment_id
	WHERE d.ordered AND d.status IN ('pending', 'retrying') AND d.waiting_for <> ''
	AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r WHERE r.endpoint_id = d.endpoint_id AND r.object_id = d.object_id
		AND r.ordered AND r.status IN ('pending', 'retrying') AND r.waiting_for = '')
	ORDER BY d.environment_id, d.endpoint_id, d.object_id LIMIT ?`
	oldLanesOfSQL = `SELECT DISTINCT d.object_id FROM webhook_deliveries d
	WHERE d.endpoint_id = ? AND d.ordered AND d.status IN ('pending', 'retrying') AND d.waiting_for <> ''
	AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r WHERE r.endpoint_id = d.endpoint_id AND r.object_id = d.object_id
		AND r.ordered AND r.status IN ('pending', 'retrying') AND r.waiting_for = '')
	ORDER BY d.object_id LIMIT ?`
)

// ExplainLaneChecks explains (PostgreSQL) the minute check's lane reads with page limit
// — expired waits and silent released deliveries before `before`, stuck lanes from the
// start, the lanes of endpointID a re-enabling releases — and, with baseline, what they
// were before: the sweeps without migration 138's indexes (dropped in a transaction
// rolled back after), the stuck lanes by SELECT DISTINCT.
func (s *Store) ExplainLaneChecks(ctx context.Context, before time.Time, endpointID string, limit int, baseline bool) (map[string]LanePlan, error) {
	stmts := map[string]struct {
		sql  string
		args []any
	}{
		"expired waits":   {laneDeliveriesSQL(expiredCond), []any{before, limit}},
		"silent released": {laneDeliveriesSQL(silentCond), []any{before, limit}},
		"stuck lanes":     {walkLanesSQL(">", "w.endpoint_id IS NOT NULL"), []any{"", "", limit}},
		"lanes of endpoint": {walkLanesSQL(">=", "w.endpoint_id = ?"),
			[]any{endpointID, "", limit, endpointID, endpointID}},
	}
	if baseline {
		stmts["stuck lanes"] = struct {
			sql  string
			args []any
		}{oldStuckLanesSQL, []any{limit}}
		stmts["lanes of endpoint"] = struct {
			sql  string
			args []any
		}{oldLanesOfSQL, []any{endpointID, limit}}
	}
	out := map[string]LanePlan{}
	err := s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error {
		if baseline {
			for _, ix := range []string{"webhook_deliveries_lane_waiting", "webhook_deliveries_lane_head", "webhook_deliveries_lane_head_age"} {
				if err := db.Exec("DROP INDEX " + ix).Error; err != nil {
					return err
				}
			}
		}
		for name, st := range stmts {
			var doc string
			if err := db.Raw("EXPLAIN (ANALYZE, FORMAT JSON) "+st.sql, st.args...).Row().Scan(&doc); err != nil {
				return fmt.Errorf("explain %s: %w", name, err)
			}
			p, err := lanePlan(doc)
			if err != nil {
				return err
			}
			out[name] = p
		}
		if baseline {
			return errRollback
		}
		return nil
	})
	if err == errRollback {
		err = nil
	}
	return out, err
}

var errRollback = fmt.Errorf("rolled back")

// lanePlan sums an EXPLAIN (ANALYZE, FORMAT JSON) document's reads of webhook_deliveries.
func lanePlan(doc string) (LanePlan, error) {
	var plans []struct {
		Plan          map[string]any
		ExecutionTime float64 `json:"Execution Time"`
	}
	if err := json.Unmarshal([]byte(doc), &plans); err != nil || len(plans) != 1 {
		return LanePlan{}, fmt.Errorf("explain document: %v", err)
	}
	out := LanePlan{Ms: plans[0].ExecutionTime}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		num := func(k string) int64 { f, _ := n[k].(float64); return int64(f) }
		if n["Relation Name"] == "webhook_deliveries" {
			out.Rows += (num("Actual Rows") + num("Rows Removed by Filter")) * max(num("Actual Loops"), 1)
			scan, _ := n["Node Type"].(string)
			if ix, ok := n["Index Name"].(string); ok {
				scan += " on " + ix
			}
			if !slices.Contains(out.Scans, scan) {
				out.Scans = append(out.Scans, scan)
			}
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	walk(plans[0].Plan)
	slices.Sort(out.Scans)
	return out, nil
}

// String is the plan's figures on one line.
func (p LanePlan) String() string {
	return fmt.Sprintf("%d rows read, %.2f ms (%s)", p.Rows, p.Ms, strings.Join(p.Scans, "; "))
}

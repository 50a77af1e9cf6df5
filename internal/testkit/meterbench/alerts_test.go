package meterbench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/testkit/usagebench"
)

// benchAlerts are the 32 usage alerts (CONTRACT §24) of the "alerted" arm, on the three
// meters: thresholds the series cross early (each fires once per series and window, then
// costs only the look at its firings) and ones they never reach (looked at by every
// turn: for the sum's months, with the month's days read), for every account or one,
// every group or one.
var benchAlerts = []struct{ meter, window, threshold, account, group string }{
	{"region_sum", "day", "1000", "", "{}"},
	{"region_sum", "day", "100000", "", "{}"},
	{"region_sum", "day", "1000000000", "", "{}"},
	{"region_sum", "month", "5000", "", "{}"},
	{"region_sum", "month", "1000000000", "", "{}"},
	{"region_sum", "day", "2000", "", `{"region":"eu-west-1"}`},
	{"region_sum", "month", "1000000000", "", `{"region":"us-east-1"}`},
	{"region_sum", "day", "500", "acct_0", "{}"},
	{"region_sum", "month", "1000000000", "acct_1", "{}"},
	{"region_sum", "day", "1000000000", "acct_2", `{"region":"ap-south-1"}`},
	{"region_sum", "month", "3000", "acct_3", `{"region":"us-west-2"}`},
	{"region_sum", "day", "20000", "", `{"region":"us-west-2"}`},
	{"users", "day", "2", "", "{}"},
	{"users", "day", "1000000", "", "{}"},
	{"users", "month", "5", "", "{}"},
	{"users", "month", "1000000", "", "{}"},
	{"users", "day", "3", "", `{"region":"eu-west-1"}`},
	{"users", "month", "1000000", "", `{"plan":"pro"}`},
	{"users", "day", "1", "acct_0", "{}"},
	{"users", "month", "1000000", "acct_1", `{"region":"us-east-1","plan":"free"}`},
	{"users", "day", "1000000", "acct_2", "{}"},
	{"users", "month", "10", "", `{"plan":"enterprise"}`},
	{"peak", "day", "500", "", "{}"},
	{"peak", "day", "999", "", "{}"},
	{"peak", "day", "1000000", "", "{}"},
	{"peak", "month", "900", "", "{}"},
	{"peak", "month", "1000000", "", "{}"},
	{"peak", "day", "100", "acct_0", "{}"},
	{"peak", "month", "1000000", "acct_1", "{}"},
	{"peak", "day", "1000000", "acct_2", "{}"},
	{"peak", "month", "999.25", "acct_3", "{}"},
	{"peak", "day", "1000", "", "{}"},
}

// putAlerts gives s's meters the 32 alerts, created now.
func putAlerts(b testing.TB, s *usagebench.Server) {
	ctx := context.Background()
	ids := map[string]string{}
	rows, err := s.Pool.Query(ctx, `SELECT key, id FROM meters WHERE environment_id = $1`, s.EnvID)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var k, id string
		if err := rows.Scan(&k, &id); err != nil {
			b.Fatal(err)
		}
		ids[k] = id
	}
	rows.Close()
	now := time.Now().UTC()
	for _, a := range benchAlerts {
		if _, err := s.Pool.Exec(ctx, `INSERT INTO meter_alerts (id, organization_id, environment_id, meter_id, threshold,
			alert_window, account_id, "group", description, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', $9)`,
			uuid.NewString(), s.OrgID, s.EnvID, ids[a.meter], a.threshold, a.window, a.account, a.group, now); err != nil {
			b.Fatal(err)
		}
	}
}

// dropAlerts removes s's alerts and their firings, counting the firings first.
func dropAlerts(b testing.TB, s *usagebench.Server) {
	ctx := context.Background()
	var firings, sent int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE event_id <> '') FROM meter_alert_firings
		WHERE environment_id = $1`, s.EnvID).Scan(&firings, &sent); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("         alerts fired %d times (%d in events)\n", firings, sent)
	for _, q := range []string{`DELETE FROM meter_alert_firings WHERE environment_id = $1`, `DELETE FROM meter_alerts WHERE environment_id = $1`,
		`DELETE FROM meter_alert_caps WHERE environment_id = $1`} {
		if _, err := s.Pool.Exec(ctx, q, s.EnvID); err != nil {
			b.Fatal(err)
		}
	}
}

// summarizeAlerts prints the alerted arms against plain and metered: the target is the
// alerted throughput ≥ 0.7 × plain.
func summarizeAlerts(b *testing.B, plain, metered, alerted []armResult) {
	mean := func(rs []armResult) float64 {
		rate := 0.0
		for _, r := range rs {
			rate += r.rate / float64(len(rs))
		}
		return rate
	}
	pr, mr, ar := mean(plain), mean(metered), mean(alerted)
	var lag []time.Duration
	for _, r := range alerted {
		lag = append(lag, r.lag...)
	}
	fmt.Printf("alerted (3 meters, 32 alerts) %.0f metrics/s: %.2f × plain (target ≥ 0.7), %.2f × metered; as_of lag p99 %.2f s\n",
		ar, ar/pr, ar/mr, usagebench.Millis(lag, 0.99)/1000)
	b.ReportMetric(ar, "alerted_metrics/s")
	b.ReportMetric(ar/pr, "alerted_ratio")
}

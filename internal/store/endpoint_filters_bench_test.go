package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// What filters add to a change's transaction (CONTRACT §25): one account written with
// its account-created event fanned out to 16 endpoints, without filters and with a
// 4 KiB filter on each (every one parsed once per change, the payload decoded once),
// which the event passes or fails:
//
//	go test ./internal/store -run '^$' -bench FanOutFilters -benchtime 300x
//
// 2026-11-27, 2 shared vCPUs, two runs: none 2.6–2.7 ms, 4 KiB pass 4.1–4.5 ms, 4 KiB
// reject (no delivery written) 3.3–4.0 ms per change: 16 parses of ~90 µs each
// (webhookfilter's BenchmarkParse), ≈ 1.4 ms and 0.9 MB per change at the worst §25 allows.
func BenchmarkFanOutFilters(b *testing.B) {
	postgresOnly(b)
	// A 4 KiB filter: long $in lists the account's name is not in, and a last
	// condition that decides.
	filter := func(last string) string {
		var items []string
		for i := 0; i < 100; i++ { // the most items an $in may hold
			items = append(items, fmt.Sprintf(`"an account name nobody has, %04d"`, i))
		}
		return `{"$not":{"account.Name":{"$in":[` + strings.Join(items, ",") + `]}},"account.Status":` + last + `}`
	}
	for _, arm := range []struct{ name, filter string }{
		{"none", ""}, {"4KiB pass", filter(`"draft"`)}, {"4KiB reject", filter(`"active"`)},
	} {
		b.Run(arm.name, func(b *testing.B) {
			st := testdb.New(b)
			env := testdb.Seed(b, st, models.EnvLive)
			db := seeded{st: st, env: env}
			for i := 0; i < 16; i++ {
				if arm.filter == "" {
					newEndpoint(b, db, fmt.Sprintf("https://%d.example/", i), nil, true)
				} else {
					newFilteredEndpoint(b, db, fmt.Sprintf("https://%d.example/", i), arm.filter)
				}
			}
			if arm.filter != "" && (len(arm.filter) > 4096 || len(arm.filter) < 3500) {
				b.Fatalf("filter of %d bytes", len(arm.filter))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ev := newAccountEvent(b, db)
				if want := arm.name == "4KiB reject"; (len(ev.FilteredEndpointIDs) == 16) != want {
					b.Fatalf("%s: %d endpoints filtered", arm.name, len(ev.FilteredEndpointIDs))
				}
			}
		})
	}
}

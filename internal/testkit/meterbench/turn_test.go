package meterbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/testkit/usagebench"
)

// BenchmarkMeterTurn measures one consumer turn at the default budget (rows × meters
// 50,000, 4 MiB; CONTRACT §21) with 1, 3 and 32 meters: REVOPS_METER_TURN_BATCHES (30)
// batches of 1,000 metrics are ingested with no consumer running, then meters.Turn runs
// alone, turn after turn, until none waits. It prints rows per turn and the turn time
// p50/p99 — what the default budget costs, beside the consumer's 0.5 s turn target.
//
//	REVOPS_METER_TURN=1 REVOPS_TEST_DATABASE_URL=postgres://… \
//	  go test ./internal/testkit/meterbench -run '^$' -bench MeterTurn -benchtime 1x -timeout 20m
func BenchmarkMeterTurn(b *testing.B) {
	if os.Getenv("REVOPS_METER_TURN") == "" {
		b.Skip("REVOPS_METER_TURN is not set")
	}
	batches := usagebench.AtoiEnv("REVOPS_METER_TURN_BATCHES", 30)
	for b.Loop() {
		fmt.Printf("\n== one consumer turn at the default budget %+v, %d batches of %d waiting  load %s\n",
			meters.DefaultBudget, batches, batchSize, usagebench.LoadAvg())
		for _, n := range []int{1, 3, 32} {
			s := usagebench.Setup(b) // a fresh database each: the same starting size
			for i := range n {
				if _, err := s.Send("POST", "/v1/meters", []byte(turnMeter(i)), http.StatusCreated); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := usagebench.Spread(batches, clients, func(c int, i int64) error {
				return s.Post(batchBody(fmt.Sprintf("turn-%d-%d", n, i), rand.New(rand.NewPCG(uint64(c), uint64(i))), batchSize))
			}); err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			var rows []int
			for more := true; more; {
				t0 := time.Now()
				ran, got, m, err := meters.Turn(context.Background(), s.Store, s.EnvID, meters.DefaultBudget)
				if err != nil || !ran {
					b.Fatalf("turn: ran %v, %v", ran, err)
				}
				took, rows, more = append(took, time.Since(t0)), append(rows, got), m
			}
			p50, p99 := usagebench.Millis(took, 0.5), usagebench.Millis(took, 0.99)
			fmt.Printf("%2d meters: %3d turns, rows per turn (first) %6d, rows × meters %7d, turn p50 %7.1f ms, p99 %7.1f ms, max %7.1f ms  load %s\n",
				n, len(took), rows[0], rows[0]*n, p50, p99, usagebench.Millis(took, 1), usagebench.LoadAvg())
			b.ReportMetric(p50, "m"+strconv.Itoa(n)+"_turn_p50_ms")
			b.ReportMetric(p99, "m"+strconv.Itoa(n)+"_turn_p99_ms")
			b.ReportMetric(float64(rows[0]), "m"+strconv.Itoa(n)+"_rows_per_turn")
		}
	}
}

// turnMeter is the i-th meter: the issue-21 three first, then meters grouped by the user
// (10,000 values), the high-cardinality case of issue 30.
func turnMeter(i int) string {
	if i < len(meterDefs) {
		return meterDefs[i].body
	}
	key := "heavy_" + strconv.Itoa(i)
	switch i % 3 {
	case 0:
		return `{"key":"` + key + `","filter":{"metric_name":"api_calls"},"aggregation":"sum","group_by":["user"]}`
	case 1:
		return `{"key":"` + key + `","filter":{"metric_name":"api_calls"},"aggregation":"count","group_by":["user","region"]}`
	default:
		return `{"key":"` + key + `","filter":{"metric_name":"api_calls"},"aggregation":"max","group_by":["user"]}`
	}
}

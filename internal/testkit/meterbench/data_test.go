package meterbench

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/revops/revops/internal/testkit/usagebench"
)

// The data of the issue: 250 accounts, each metric with a region (4), a plan (3) and a
// user (10,000) in its metadata, one metric name that every meter counts.
const (
	accounts   = 250
	users      = 10000
	metricName = "api_calls"
	batchSize  = 1000
	clients    = 8
)

var (
	regions = []string{"us-east-1", "us-west-2", "eu-west-1", "ap-south-1"}
	plans   = []string{"free", "pro", "enterprise"}
)

// meter is one of the three meters and the group_by its values are read with
// (a unique_count meter's must be its own; see CONTRACT §18).
type meter struct {
	key, body, groupBy string
}

var meterDefs = []meter{
	{"region_sum", `{"key":"region_sum","filter":{"metric_name":"api_calls"},"aggregation":"sum","group_by":["region"]}`, "region"},
	{"users", `{"key":"users","filter":{"metric_name":"api_calls"},"aggregation":"unique_count","value_key":"user","group_by":["region","plan"]}`, "region,plan"},
	{"peak", `{"key":"peak","filter":{"metric_name":"api_calls"},"aggregation":"max"}`, ""},
}

// createMeters defines the three meters in s's environment through the API.
func createMeters(b testing.TB, s *usagebench.Server) {
	for _, m := range meterDefs {
		if _, err := s.Send("POST", "/v1/meters", []byte(m.body), http.StatusCreated); err != nil {
			b.Fatal(err)
		}
	}
}

// batchBody is one request of size metrics with random accounts and metadata, each
// metric's timestamp (integer Unix seconds, which §5 allows) within the current hour and
// not after now. Every metric has its own metadata, as real traffic does, so the
// decoder's shortcut for a repeated metadata object does not apply.
func batchBody(tx string, rng *rand.Rand, size int) []byte {
	now := time.Now().Unix()
	hour := now - now%3600
	buf := make([]byte, 0, 96+size*200)
	buf = append(buf, `{"transaction_id":"`...)
	buf = append(buf, tx...)
	buf = append(buf, `","mode":"increment","event_metrics":[`...)
	for i := range size {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"account_id":"acct_`...)
		buf = strconv.AppendInt(buf, int64(rng.IntN(accounts)), 10)
		buf = append(buf, `","product":"platform","metric_name":"api_calls","metric_value":`...)
		buf = strconv.AppendInt(buf, int64(rng.IntN(1000)), 10)
		buf = append(buf, `.25,"metric_resolution":"hour","timestamp":`...)
		buf = strconv.AppendInt(buf, hour+rng.Int64N(now-hour+1), 10)
		buf = append(buf, `,"metadata":{"region":"`...)
		buf = append(buf, regions[rng.IntN(len(regions))]...)
		buf = append(buf, `","plan":"`...)
		buf = append(buf, plans[rng.IntN(len(plans))]...)
		buf = append(buf, `","user":"user_`...)
		buf = strconv.AppendInt(buf, int64(rng.IntN(users)), 10)
		buf = append(buf, `"}}`...)
	}
	return append(buf, "]}"...)
}

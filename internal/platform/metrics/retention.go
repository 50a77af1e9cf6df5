package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var retentionPurged = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "revops_retention_rows_purged_total",
	Help: "Rows deleted by the retention workflow, by table (CONTRACT §16).",
}, []string{"table"})

// RetentionRowsPurged counts rows a retention batch deleted from table.
func RetentionRowsPurged(table string, n int64) {
	if n > 0 {
		retentionPurged.WithLabelValues(table).Add(float64(n))
	}
}

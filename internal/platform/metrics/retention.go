package metrics

var retentionPurged = newCounterVec("revops_retention_rows_purged_total",
	"Rows deleted by the retention workflow, by table (CONTRACT §16).",
	"table")

// RetentionRowsPurged counts rows a retention batch deleted from table.
func RetentionRowsPurged(table string, n int64) {
	if n > 0 {
		retentionPurged.WithLabelValues(table).Add(float64(n))
	}
}

package config

import (
	"net/url"
	"strings"
)

// TemporalRunURL links to one run's history in the Temporal UI, "" without a run or a
// UI base URL. The API's events and the dashboard's deliveries both use it.
func (c Config) TemporalRunURL(workflowID, runID string) string {
	if workflowID == "" || runID == "" || c.TemporalUIURL == "" {
		return ""
	}
	return strings.TrimRight(c.TemporalUIURL, "/") + "/namespaces/" + url.PathEscape(c.TemporalNamespace) +
		"/workflows/" + url.PathEscape(workflowID) + "/" + url.PathEscape(runID) + "/history"
}

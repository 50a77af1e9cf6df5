package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/platform/catalog"
)

// eventTypeObject is one entry of GET /v1/event_types (CONTRACT §13).
type eventTypeObject struct {
	Object      string          `json:"object"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"` // JSON Schema (2020-12) of the delivered body
}

// listEventTypes serves the whole catalog in one page: it is short and the same in
// every environment.
func (s *Server) listEventTypes(c *gin.Context) {
	if err := checkQuery(c); err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, newList(toEventTypeObjects(catalog.All()), false))
}

func toEventTypeObjects(types []catalog.EventType) []eventTypeObject {
	out := make([]eventTypeObject, len(types))
	for i, t := range types {
		out[i] = eventTypeObject{Object: "event_type", Name: t.Name, Description: t.Description, Schema: t.Schema}
	}
	return out
}

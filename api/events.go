package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/models"
)

// eventStatuses are the delivery statuses of CONTRACT §8.
var eventStatuses = []string{models.EventPending, models.EventRetrying, models.EventDelivered, models.EventFailed, models.EventSkipped}

// eventFilter reads and checks the list filters of GET /v1/events.
func eventFilter(c *gin.Context) (events.Filter, error) {
	objectID, err := idQuery(c, "object_id")
	if err != nil {
		return events.Filter{}, err
	}
	endpointID, err := idQuery(c, "endpoint_id")
	if err != nil {
		return events.Filter{}, err
	}
	// With endpoint_id, status is that endpoint's delivery's (CONTRACT §13).
	f := events.Filter{Type: c.Query("type"), Status: c.Query("status"), ObjectID: objectID, EndpointID: endpointID}
	var fs apperr.Faults
	checkEventFilter(&fs, f.Type, f.Status)
	f.CreatedAfter, f.CreatedBefore = timeQuery(c, "created_after", false, true, &fs), timeQuery(c, "created_before", false, true, &fs)
	checkRange(&fs, f.CreatedAfter, f.CreatedBefore)
	return f, fs.Err()
}

func checkEventFilter(fs *apperr.Faults, typ, status string) {
	if typ != "" && !catalog.Known(typ) {
		fs.Invalid("type", "type must be one of %v.", catalog.Names())
	}
	if status != "" && !slices.Contains(eventStatuses, status) {
		fs.Invalid("status", "status must be one of %v.", eventStatuses)
	}
}

func checkRange(fs *apperr.Faults, after, before *time.Time) {
	if after != nil && before != nil && !after.Before(*before) {
		fs.Invalid("created_before", "created_before must be later than created_after.")
	}
}

func (s *Server) listEvents(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	f, err := eventFilter(c)
	if err != nil {
		fail(c, err)
		return
	}
	list, more, err := events.List(c.Request.Context(), s.store, principal(c).Env, f, page)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]events.Object, len(list))
	for i, e := range list {
		out[i] = events.ToObject(e, s.links)
	}
	render(c, http.StatusOK, newList(out, more))
}

func (s *Server) getEvent(c *gin.Context) {
	e, err := events.Get(c.Request.Context(), s.store, principal(c).Env, c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, events.ToObject(e, s.links))
}

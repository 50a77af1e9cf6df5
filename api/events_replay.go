package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

// replayOneRequest is the optional body of an event's replay: one endpoint's delivery.
type replayOneRequest struct {
	EndpointID string `json:"endpoint_id"`
}

func (s *Server) replayEvent(c *gin.Context) {
	var req replayOneRequest
	if err := bindOptionalJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	var fs apperr.Faults
	checkEndpointID(&fs, req.EndpointID)
	if err := fs.Err(); err != nil {
		fail(c, err)
		return
	}
	// The answer is the event object of GET /v1/events/{id} as the replay's own
	// transaction reads it back, kept there (CONTRACT §14).
	reply := replyAs[events.Object](c, http.StatusAccepted)
	r, err := replay.Event(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), req.EndpointID, s.links, reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), events.ToObject(r, s.links))
}

// checkEndpointID refuses an endpoint_id that cannot be an id ("" is none).
func checkEndpointID(fs *apperr.Faults, id string) {
	if textcheck.LineOK(fs, "endpoint_id", id) && id != "" && !textcheck.IsID(id) {
		fs.Invalid("endpoint_id", "endpoint_id must be the id of a webhook endpoint.")
	}
}

// replayRequest is the filter of a bulk replay; times are RFC 3339 or Unix seconds.
type replayRequest struct {
	Status        string          `json:"status"`
	Type          string          `json:"type"`
	EndpointID    string          `json:"endpoint_id"`
	CreatedAfter  json.RawMessage `json:"created_after"`
	CreatedBefore json.RawMessage `json:"created_before"`
}

// toReplayFilter checks a bulk replay's filter: at least one criterion, so that an
// empty body never replays a whole environment by accident. With endpoint_id, status
// is that endpoint's delivery's (CONTRACT §13).
func toReplayFilter(r replayRequest) (events.Filter, error) {
	f := events.Filter{Status: r.Status, Type: r.Type, EndpointID: r.EndpointID}
	var fs apperr.Faults
	typ, status := f.Type, f.Status
	if !textcheck.LineOK(&fs, "type", typ) {
		typ = ""
	}
	if !textcheck.LineOK(&fs, "status", status) {
		status = ""
	}
	checkEventFilter(&fs, typ, status)
	checkEndpointID(&fs, f.EndpointID)
	f.CreatedAfter = timeValue(r.CreatedAfter, "created_after", &fs)
	f.CreatedBefore = timeValue(r.CreatedBefore, "created_before", &fs)
	checkRange(&fs, f.CreatedAfter, f.CreatedBefore)
	if f == (events.Filter{}) && len(fs) == 0 {
		fs.Missing("status")
		fs[0].Message = "Give at least one filter: status, type, endpoint_id, created_after or created_before."
	}
	return f, fs.Err()
}

// timeValue reads a JSON time: an RFC 3339 string or integer Unix seconds (as a number
// or a string of digits), like the list filters. null or absent means none.
func timeValue(raw json.RawMessage, name string, fs *apperr.Faults) *time.Time {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			text = ""
		}
		if !textcheck.LineOK(fs, name, text) {
			return nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		t = t.UTC()
		return &t
	}
	if sec, err := strconv.ParseInt(text, 10, 64); err == nil && sec >= 0 && sec < 1<<40 {
		t := time.Unix(sec, 0).UTC()
		return &t
	}
	fs.Invalid(name, "%s must be an RFC 3339 time or integer Unix seconds.", name)
	return nil
}

func (s *Server) replayEvents(c *gin.Context) {
	var req replayRequest
	if err := bindJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	f, err := toReplayFilter(req)
	if err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[replay.JobObject](c, http.StatusAccepted)
	j, err := replay.CreateJob(c.Request.Context(), s.store, principal(c).Env, f, time.Now(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), replay.ToJobObject(j))
}

func (s *Server) getReplayJob(c *gin.Context) {
	j, err := replay.Job(c.Request.Context(), s.store, principal(c).Env, c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, replay.ToJobObject(j))
}

package api

import (
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/platform/apperr"
)

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type      string         `json:"type"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Param     string         `json:"param,omitempty"`
	RequestID string         `json:"request_id"`
	Errors    []apperr.Fault `json:"errors,omitempty"`
}

// fail answers err with its CONTRACT §4 envelope; httperr.Of, shared with the dashboard,
// chooses the status and the words.
func fail(c *gin.Context, err error) {
	p := httperr.Of(err)
	switch {
	case p.Status == http.StatusUnauthorized:
		c.Header("WWW-Authenticate", `Bearer realm="revops"`)
	case p.RetryAfter > 0:
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(p.RetryAfter.Seconds()))))
	}
	if p.Status >= http.StatusInternalServerError { // a 503 with Retry-After too: the operator needs it
		logger(c).Error("request failed", "request_id", requestID(c), "err", err)
	}
	abortJSON(c, p.Status, errorBody{Error: errorDetail{
		Type: p.Type, Code: p.Code, Message: p.Message, Param: p.Param, RequestID: requestID(c), Errors: p.Faults,
	}})
}

package api

import (
	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// listResponse is the list envelope of CONTRACT §9.
type listResponse[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

func newList[T any](data []T, hasMore bool) listResponse[T] {
	if data == nil {
		data = []T{}
	}
	return listResponse[T]{Object: "list", Data: data, HasMore: hasMore}
}

// The bounds of ?limit= (CONTRACT §9; §5's summary and §18's values allow more).
const (
	defaultLimit = 20
	maxLimit     = 100
)

// pageParams checks the whole query string (every list route calls it first) and
// reads ?limit= and ?starting_after=, the one paging of the API's lists (§18's meter
// values alone page by an opaque page instead).
func pageParams(c *gin.Context) (models.Page, error) {
	p := models.Page{Limit: defaultLimit}
	if err := checkQuery(c); err != nil {
		return p, err
	}
	after, err := idQuery(c, "starting_after")
	if err != nil {
		return p, err
	}
	p.StartingAfter = after
	var fs apperr.Faults
	if n, ok := limitQuery(c, maxLimit, &fs); ok {
		p.Limit = n
	}
	return p, fs.Err()
}

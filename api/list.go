package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
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

// pageParams checks the whole query string (every list route calls it first) and
// reads ?limit= and ?starting_after=.
func pageParams(c *gin.Context) (store.Page, error) {
	p := store.Page{Limit: 20}
	if err := checkQuery(c); err != nil {
		return p, err
	}
	after, err := idQuery(c, "starting_after")
	if err != nil {
		return p, err
	}
	p.StartingAfter = after
	if v, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return p, httperr.Request(http.StatusBadRequest, apperr.CodeParameterInvalid, "limit", "limit must be an integer from 1 to 100.")
		}
		p.Limit = n
	}
	return p, nil
}

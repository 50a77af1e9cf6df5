package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/apiobject"
	"github.com/revops/revops/internal/platform/apperr"
)

// GET /v1/meters/{key}/values (CONTRACT §18). The query is read here into a
// meters.ValuesQuery, its types and ranges checked with every fault listed at once;
// meters.Values checks it against the meter (window boundaries, the number of windows,
// group_by and filter keys) and reads the kept figures.

// meterValuesObject is the §18 answer of GET /v1/meters/{key}/values.
type meterValuesObject struct {
	Object   string       `json:"object"`
	Meter    string       `json:"meter"`
	Window   string       `json:"window"`
	AsOf     string       `json:"as_of"`
	Data     []meterValue `json:"data"`
	HasMore  bool         `json:"has_more"`
	NextPage *string      `json:"next_page"` // null on the last page
}

type meterValue struct {
	WindowStart string             `json:"window_start"`
	WindowEnd   string             `json:"window_end"`
	AccountID   string             `json:"account_id"`
	Group       map[string]*string `json:"group"`
	Value       json.Number        `json:"value"` // exact decimal text, sent as a JSON number
}

func toMeterValues(key string, q meters.ValuesQuery, p meters.ValuesPage) meterValuesObject {
	out := meterValuesObject{Object: "meter_values", Meter: key, Window: q.Window,
		AsOf: p.AsOf.UTC().Format(time.RFC3339Nano), Data: make([]meterValue, len(p.Data)),
		HasMore: p.NextPage != "", NextPage: apiobject.NonEmpty(p.NextPage)}
	for i, v := range p.Data {
		group := v.Group
		if group == nil {
			group = map[string]*string{}
		}
		out.Data[i] = meterValue{WindowStart: v.WindowStart.UTC().Format(time.RFC3339), WindowEnd: v.WindowEnd.UTC().Format(time.RFC3339),
			AccountID: v.AccountID, Group: group, Value: json.Number(v.Value)}
	}
	return out
}

func (s *Server) meterValues(c *gin.Context) {
	q, err := valuesQuery(c)
	if err != nil {
		fail(c, err)
		return
	}
	key := c.Param("key")
	p, err := s.meters.Values(c.Request.Context(), principal(c).Env, key, q, time.Now())
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toMeterValues(key, q, p))
}

// maxPageCursor bounds page: a cursor is the meters package's next_page, and a longer
// text is none of its cursors.
const maxPageCursor = 1000

// filterParamPre begins the filter[k]=v parameters, the only ones with a free name.
const filterParamPre = "filter["

var meterWindows = []string{meters.WindowMinute, meters.WindowHour, meters.WindowDay, meters.WindowWeek, meters.WindowMonth}

// valuesQuery reads the values query. Unknown parameters are ignored, as on every list
// route (checkQuery); filter[k] parameters are the only ones with a free name.
func valuesQuery(c *gin.Context) (meters.ValuesQuery, error) {
	q := meters.ValuesQuery{Limit: meters.DefaultLimit}
	if err := checkQuery(c); err != nil {
		return q, err
	}
	var fs apperr.Faults
	q.From, q.To = boundQuery(c, "from", &fs), boundQuery(c, "to", &fs)
	switch w := c.Query("window"); {
	case w == "":
		fs.Missing("window")
	case !slices.Contains(meterWindows, w):
		fs.Invalid("window", "window must be one of %s.", strings.Join(meterWindows, ", "))
	default:
		q.Window = w
	}
	if v := c.Query("account_id"); v != "" && usage.IdentifierOK(&fs, "account_id", v) {
		q.AccountID = v
	}
	if v, ok := c.GetQuery("group_by"); ok {
		q.GroupBy = groupByQuery(v, &fs)
	}
	q.Filters = filterQuery(c, &fs)
	if n, ok := limitQuery(c, meters.MaxLimit, &fs); ok {
		q.Limit = n
	}
	if v := c.Query("page"); len(v) > maxPageCursor {
		fs.Invalid("page", "page must be the next_page of a previous answer.")
	} else {
		q.Page = v
	}
	return q, fs.Err()
}

// boundQuery reads from or to: required RFC 3339 times (meters.Values checks that they
// fall on the window's boundaries and that to is after from).
func boundQuery(c *gin.Context, name string, fs *apperr.Faults) time.Time {
	if t := timeQuery(c, name, true, false, fs); t != nil {
		return *t
	}
	return time.Time{}
}

// groupByQuery reads group_by=k1,k2: metadata keys, none empty or repeated.
func groupByQuery(v string, fs *apperr.Faults) []string {
	keys := strings.Split(v, ",")
	for i, k := range keys {
		switch {
		case k == "":
			fs.Invalid("group_by", "group_by holds an empty key; separate the keys with single commas.")
			return nil
		case !usage.IdentifierOK(fs, "group_by", k):
			return nil
		case slices.Contains(keys[:i], k):
			fs.Invalid("group_by", "group_by names %q twice.", k)
			return nil
		}
	}
	return keys
}

// filterQuery reads every filter[k]=v: k a metadata key, v the canonical text of its value
// (CONTRACT §18), each parameter once. nil when there is none.
func filterQuery(c *gin.Context, fs *apperr.Faults) map[string]string {
	query := c.Request.URL.Query()
	params := make([]string, 0, len(query))
	for p := range query {
		if strings.HasPrefix(p, filterParamPre) {
			params = append(params, p)
		}
	}
	sort.Strings(params) // faults in a stable order
	var out map[string]string
	for _, p := range params {
		k, closed := strings.CutSuffix(strings.TrimPrefix(p, filterParamPre), "]")
		vs := query[p]
		switch {
		case !closed || k == "" || strings.ContainsAny(k, "[]"):
			fs.Invalid(p, "%s is not a filter: write filter[<metadata key>]=<value>.", p)
		case !usage.IdentifierOK(fs, p, k):
		case len(vs) > 1:
			fs.Invalid(p, "%s is given %d times; a group has one value for a key.", p, len(vs))
		case vs[0] == "" || utf8.RuneCountInString(vs[0]) > usage.MaxIDLength:
			fs.Invalid(p, "%s must be 1 to %d characters.", p, usage.MaxIDLength)
		default:
			if out == nil {
				out = map[string]string{}
			}
			out[k] = vs[0]
		}
	}
	return out
}

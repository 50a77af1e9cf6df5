package meters

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Windows of a values query (CONTRACT §18), in UTC; week is ISO (Monday).
const (
	WindowMinute = period.Minute
	WindowHour   = period.Hour
	WindowDay    = period.Day
	WindowWeek   = period.Week
	WindowMonth  = period.Month
)

// Bounds of a values query (CONTRACT §18).
const (
	MaxWindows   = 1000
	DefaultLimit = 100
	MaxLimit     = 1000
)

// ValuesQuery is GET /v1/meters/{key}/values, its parameters parsed by the API (types
// and ranges); Values checks them against the meter (boundaries, the window bound,
// group_by and filter keys).
type ValuesQuery struct {
	From, To  time.Time
	Window    string
	AccountID string   // "" = every account
	GroupBy   []string // nil = no grouping beyond account_id
	Filters   map[string]string
	Limit     int    // 1..MaxLimit; 0 = DefaultLimit
	Page      string // next_page of the previous answer
}

// Value is one row of a values answer. Group holds the asked group_by keys, nil for an
// absent value; Value is exact decimal text (rendered as a JSON number).
type Value struct {
	WindowStart, WindowEnd time.Time
	AccountID              string
	Group                  map[string]*string
	Value                  string
}

// ValuesPage is a values answer: its rows, how current they are, and the next page's
// cursor ("" on the last page).
type ValuesPage struct {
	AsOf     time.Time
	Data     []Value
	NextPage string
	Cost     ValuesCost // what the page cost (not rendered)
}

// errQuery is the cause of every refused values query.
var errQuery = errors.New("invalid values query")

func invalid(param, format string, args ...any) error {
	return apperr.Invalid(errQuery, apperr.CodeParameterInvalid, param, format, args...)
}

// Values reads a meter's figures for q from the kept figures only, with as_of read first:
// figures only grow more complete, so everything accepted before as_of is in them.
func (s *Queries) Values(ctx context.Context, env models.Env, key string, q ValuesQuery, now time.Time) (ValuesPage, error) {
	m, err := s.Store.Meter(ctx, env, key)
	if err != nil {
		return ValuesPage{}, err
	}
	groupBy, cols, err := checkQuery(&m, &q)
	if err != nil {
		return ValuesPage{}, err
	}
	after, err := decodePage(q.Page)
	if err != nil {
		return ValuesPage{}, err
	}
	// Checked after validation: a bad query is a 400, never a 429 (CONTRACT §21).
	leave, err := s.queries.Enter(ctx, env.ID, s.MaxQueries, "meter values queries")
	if err != nil {
		return ValuesPage{}, err
	}
	defer leave()
	asOf, err := s.Store.MeterAsOf(ctx, m, now)
	if err != nil {
		return ValuesPage{}, err
	}
	b := &pageBuilder{meter: &m, q: &q, cols: cols, fold: len(cols) < len(m.GroupBy), inOrder: leading(cols),
		asked: map[string]askedGroup{}}
	b.after = cursor{WindowStart: q.From} // before every row of the first window
	if after != nil && !after.WindowStart.Before(q.From) {
		b.after = *after
	}
	rd := &reader{st: s.Store, b: b, fq: store.FigureQuery{MeterID: m.ID, AccountID: q.AccountID,
		Kind: keptKind(q.Window, m.Aggregation == models.AggUniqueCount), Filters: map[int]string{}}}
	for k, v := range q.Filters {
		rd.fq.Filters[slices.Index(m.GroupBy, k)] = v
	}
	read := rd.readWindows
	switch {
	case q.Window == WindowMinute:
		read = rd.readMinutes
	case rd.fq.Kind != q.Window:
		read = rd.readDays
	}
	stop, err := read(ctx)
	if err != nil {
		return ValuesPage{}, err
	}
	page := b.page(groupBy, stop)
	page.AsOf = asOf
	return page, nil
}

// checkQuery checks q against the meter (the API has checked each parameter's form):
// the window's bounds, the 1,000-window bound, group_by and filter keys. It returns the
// asked group_by keys in the meter's order and their positions in it.
func checkQuery(m *models.Meter, q *ValuesQuery) ([]string, []int, error) {
	if !period.Valid(q.Window) {
		return nil, nil, invalid("window", "window must be minute, hour, day, week or month.")
	}
	var f *period.Fault
	if q.From, q.To, f = period.CheckRange(q.From, q.To, q.Window, MaxWindows); f != nil {
		return nil, nil, invalid(f.Param, "%s", f.Message)
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return nil, nil, invalid("limit", "limit must be between 1 and %d.", MaxLimit)
	}
	asked := map[string]bool{}
	for _, k := range q.GroupBy {
		if !slices.Contains(m.GroupBy, k) {
			return nil, nil, invalid("group_by", "group_by key %q is not one of the meter's group_by keys %v.", k, m.GroupBy)
		}
		asked[k] = true
	}
	if m.Aggregation == models.AggUniqueCount && len(asked) != len(m.GroupBy) {
		return nil, nil, invalid("group_by", "A unique_count meter's values are grouped by exactly its group_by keys %v (distinct counts do not add up).", m.GroupBy)
	}
	for k := range q.Filters {
		if !slices.Contains(m.GroupBy, k) {
			return nil, nil, invalid("filter["+k+"]", "filter key %q is not one of the meter's group_by keys %v.", k, m.GroupBy)
		}
	}
	var keys []string
	var cols []int
	for i, k := range m.GroupBy {
		if asked[k] {
			keys, cols = append(keys, k), append(cols, i)
		}
	}
	return keys, cols, nil
}

// row is one answer row being built.
type row struct {
	cursor
	vals []*string
	fig  figure
}

func (r *row) value(groupBy []string) Value {
	v := Value{WindowStart: r.WindowStart, WindowEnd: r.windowEnd, AccountID: r.AccountID, Group: map[string]*string{},
		Value: r.fig.value.String()}
	for i, k := range groupBy {
		v.Group[k] = r.vals[i]
	}
	return v
}

// cursorOf is the key of v in the answer's order.
func (v Value) cursorOf(groupBy []string) cursor {
	vals := make([]*string, len(groupBy))
	for i, k := range groupBy {
		vals[i] = v.Group[k]
	}
	return cursor{WindowStart: v.WindowStart, AccountID: v.AccountID, Groups: groupsText(vals)}
}

// cursor is a row's place in the answer's order; encoded, it is next_page.
type cursor struct {
	WindowStart time.Time `json:"w"`
	AccountID   string    `json:"a"`
	Groups      string    `json:"g"`
	windowEnd   time.Time
}

func (c *cursor) compare(o *cursor) int {
	if n := c.WindowStart.Compare(o.WindowStart); n != 0 {
		return n
	}
	if n := strings.Compare(c.AccountID, o.AccountID); n != 0 {
		return n
	}
	return strings.Compare(c.Groups, o.Groups)
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c) // plain fields always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePage reads a next_page cursor; nil for the first page.
func decodePage(page string) (*cursor, error) {
	if page == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(page)
	var c cursor
	if err != nil || json.Unmarshal(b, &c) != nil {
		return nil, invalid("page", "page is not a next_page value of this query.")
	}
	c.WindowStart = c.WindowStart.UTC()
	return &c, nil
}

package meters

import (
	"context"
	"errors"
	"time"

	"github.com/revops/revops/internal/store"
)

// Windows of a values query (CONTRACT §18), in UTC; week is ISO (Monday).
const (
	WindowMinute = "minute"
	WindowHour   = "hour"
	WindowDay    = "day"
	WindowWeek   = "week"
	WindowMonth  = "month"
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
}

var errTODO = errors.New("meters: values not implemented yet")

// Values reads a meter's figures for q from the kept figures only.
func (s *Service) Values(ctx context.Context, env store.Env, key string, q ValuesQuery, now time.Time) (ValuesPage, error) {
	return ValuesPage{}, errTODO
}

package meters

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// maxDimension is the longest canonical text a group or unique value may have; longer
// ones count as absent (CONTRACT §18).
const maxDimension = 255

// canonicalText is a metadata value's text for group_by and value_key (CONTRACT §18): a
// string its content, a number its canonical decimal (so 1, 1.0, 1e0 and "1" are one
// value), a boolean true/false. Objects, arrays, null and texts over 255 characters are
// absent (ok false).
func canonicalText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var text string
	switch c := raw[0]; {
	case c == '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", false
		}
	case c == '-' || (c >= '0' && c <= '9'):
		text = decimal.CanonicalNumber(string(raw))
	case c == 't' || c == 'f':
		text = string(raw)
	default: // null, object, array
		return "", false
	}
	if utf8.RuneCountInString(text) > maxDimension {
		return "", false
	}
	return text, true
}

// dims reads the values of keys in a row's metadata (nil where absent).
type dims map[string]json.RawMessage

func parseDims(metadata string) dims {
	var d dims
	if json.Unmarshal([]byte(metadata), &d) != nil {
		return nil // stored metadata is a checked object; nothing to read otherwise
	}
	return d
}

// value is key's canonical text, nil when absent.
func (d dims) value(key string) *string {
	text, ok := canonicalText(d[key])
	if !ok {
		return nil
	}
	return &text
}

// groupOf is a row's group: its values for keys, and their JSON array text, the key
// figures are kept under (null for an absent value).
func (d dims) groupOf(keys []string) ([]*string, string) {
	vals := make([]*string, len(keys))
	for i, k := range keys {
		vals[i] = d.value(k)
	}
	return vals, groupsText(vals)
}

// groupsText is the JSON array of group values, the kept key of a group.
func groupsText(vals []*string) string {
	if len(vals) == 0 {
		return "[]"
	}
	var sb strings.Builder
	sb.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			sb.WriteByte(',')
		}
		if v == nil {
			sb.WriteString("null")
			continue
		}
		b, _ := json.Marshal(*v) // a string always encodes
		sb.Write(b)
	}
	sb.WriteByte(']')
	return sb.String()
}

// parseGroups reads a kept group key back.
func parseGroups(text string) []*string {
	var vals []*string
	_ = json.Unmarshal([]byte(text), &vals) // written by groupsText
	return vals
}

// rowDims reads the metadata values meters need from a transaction's rows: each row is
// scanned once for every key any meter reads, and equal values share one canonical text
// and one group key, so that a hundred thousand rows cost a scan each, not a decode and
// an encoding per row and meter.
type rowDims struct {
	keys   []string
	index  map[string]int
	raw    [][]byte // row i's value of keys[j] at i*len(keys)+j
	canon  map[string]*string
	groups map[groupKey]string
}

// groupKey is a group's values and how many keys the meter groups by: [eu, nil] of two
// keys is `["eu",null]`, of one `["eu"]`.
type groupKey struct {
	vals [MaxGroupBy]*string
	n    int
}

func newRowDims(meters []models.Meter, rows []store.UsageRow) *rowDims {
	d := &rowDims{index: map[string]int{}, canon: map[string]*string{}, groups: map[groupKey]string{}}
	for _, m := range meters {
		for _, k := range append(slices.Clone(m.GroupBy), m.ValueKey) {
			if _, ok := d.index[k]; !ok && k != "" {
				d.index[k] = len(d.keys)
				d.keys = append(d.keys, k)
			}
		}
	}
	d.raw = make([][]byte, len(rows)*len(d.keys))
	if len(d.keys) == 0 {
		return d
	}
	for i := range rows {
		out := d.raw[i*len(d.keys) : (i+1)*len(d.keys)]
		if !usage.MetadataValues(rows[i].Metadata, d.keys, out) {
			clear(out) // stored metadata is a checked object; nothing to read otherwise
		}
	}
	return d
}

// value is row i's canonical text for key, nil when absent.
func (d *rowDims) value(i int, key string) *string {
	raw := d.raw[i*len(d.keys)+d.index[key]]
	if raw == nil {
		return nil
	}
	if v, ok := d.canon[string(raw)]; ok {
		return v
	}
	var v *string
	if text, ok := canonicalText(raw); ok {
		v = &text
	}
	d.canon[string(raw)] = v
	return v
}

// group is row i's group for keys: its values and their kept key (groupsText).
func (d *rowDims) group(i int, keys []string) ([MaxGroupBy]*string, string) {
	var vals [MaxGroupBy]*string
	for j, k := range keys {
		vals[j] = d.value(i, k)
	}
	gk := groupKey{vals, len(keys)}
	text, ok := d.groups[gk]
	if !ok {
		text = groupsText(vals[:len(keys)])
		d.groups[gk] = text
	}
	return vals, text
}

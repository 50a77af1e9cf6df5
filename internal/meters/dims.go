package meters

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/usage"
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
		text = usage.CanonicalNumber(string(raw))
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

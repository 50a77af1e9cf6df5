package meters

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/decimal"
)

// encodeSlots writes an hour's minute figures: "minute=value" separated by ";", ascending
// by minute, with "|ts|seq|id" after the value when the figure orders by its latest row.
func encodeSlots(slots map[int]*figure) string {
	text, _ := mergeSlotsText(nil, slots, nil) // with nothing kept, nothing folds or fails
	return text
}

// mergeSlots folds changed (this transaction's minute figures) into kept, encodeSlots'
// text of the kept ones, decoding only the minutes both have.
func mergeSlots(agg string, kept string, changed map[int]*figure) (string, error) {
	if kept == "" {
		return encodeSlots(changed), nil
	}
	return mergeSlotsText(strings.Split(kept, ";"), changed, func(part string, f *figure) error {
		_, old, err := decodeSlot(part)
		if err != nil {
			return err
		}
		f.combine(agg, old)
		return nil
	})
}

// mergeSlotsText writes the kept minute parts (ascending) and the changed minutes in
// minute order; for a minute in both, fold folds the kept part into the changed figure,
// which is written in its place.
func mergeSlotsText(kept []string, changed map[int]*figure, fold func(part string, f *figure) error) (string, error) {
	minutes := make([]int, 0, len(changed))
	for m := range changed {
		minutes = append(minutes, m)
	}
	slices.Sort(minutes)
	var sb strings.Builder
	put := func(m int, f *figure) {
		if sb.Len() > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(strconv.Itoa(m))
		sb.WriteByte('=')
		sb.WriteString(f.value.String())
		if f.latestID != "" {
			fmt.Fprintf(&sb, "|%d|%d|%s", f.latestTS.UnixNano(), f.latestSeq, f.latestID)
		}
	}
	i := 0
	for _, part := range kept {
		head, _, _ := strings.Cut(part, "=")
		m, err := strconv.Atoi(head)
		if err != nil {
			return "", fmt.Errorf("minute figure %q", part)
		}
		for ; i < len(minutes) && minutes[i] < m; i++ {
			put(minutes[i], changed[minutes[i]])
		}
		if i < len(minutes) && minutes[i] == m {
			if err := fold(part, changed[m]); err != nil {
				return "", err
			}
			put(m, changed[m])
			i++
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(part)
	}
	for ; i < len(minutes); i++ {
		put(minutes[i], changed[minutes[i]])
	}
	return sb.String(), nil
}

// decodeSlots reads encodeSlots' text.
func decodeSlots(text string) (map[int]*figure, error) {
	if text == "" {
		return nil, nil
	}
	slots := map[int]*figure{}
	for _, part := range strings.Split(text, ";") {
		minute, f, err := decodeSlot(part)
		if err != nil {
			return nil, err
		}
		slots[minute] = f
	}
	return slots, nil
}

// decodeSlot reads one minute's part of encodeSlots' text.
func decodeSlot(part string) (int, *figure, error) {
	m, rest, ok := strings.Cut(part, "=")
	minute, err := strconv.Atoi(m)
	if !ok || err != nil {
		return 0, nil, fmt.Errorf("minute figure %q", part)
	}
	fields := strings.Split(rest, "|")
	v, err := decimal.ParseStored(fields[0])
	if err != nil {
		return 0, nil, fmt.Errorf("minute figure %q: %w", part, err)
	}
	f := &figure{value: v, has: true}
	if len(fields) == 4 {
		ns, err1 := strconv.ParseInt(fields[1], 10, 64)
		seq, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, nil, fmt.Errorf("minute figure %q", part)
		}
		f.latestTS, f.latestSeq, f.latestID = time.Unix(0, ns).UTC(), seq, fields[3]
	}
	return minute, f, nil
}

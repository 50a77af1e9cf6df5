package meters

// keptKind is the kind of kept figure a window is read from: minutes from their hours'
// slots; unique_count keeps every other window (distinct counts do not add up); the
// others keep hours and days, and add days up into weeks and months.
func keptKind(window string, unique bool) string {
	switch {
	case window == WindowMinute:
		return WindowHour
	case unique || window == WindowHour:
		return window
	}
	return WindowDay
}

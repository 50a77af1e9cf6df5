package noisyload

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Table prints the phases' figures, one row each, with the load average.
func Table(s Settings, rows []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "noisy neighbour (issue 20): A %g changes/s × %d endpoints held %s, B %g change/s, %s per phase; %s\n",
		s.ARate, s.Endpoints, s.Hold, s.BRate, s.Duration, Slots())
	fmt.Fprintf(&b, "%-6s %-7s %5s %9s %9s %9s %4s %4s %9s | %6s %9s %9s %9s %9s %7s | %s\n",
		"shape", "phase", "B n", "B p50", "B p90", "B max", ">1s", "miss", "B api p90",
		"A sent", "A api p90", "A arr/s", "A ack/s", "ack/s ph", "A peak", "load before → after")
	for _, r := range rows {
		maxs := ms(r.B.Max)
		if r.B.Missing > 0 {
			maxs = "> " + maxs
		}
		aCols := fmt.Sprintf("%6s %9s %9s %9s %9s %7s", "-", "-", "-", "-", "-", "-")
		if r.ASent > 0 {
			aCols = fmt.Sprintf("%6d %9s %9.1f %9.1f %9.1f %7d", r.ASent, ms(r.AAnswer.P90),
				float64(r.AArrivedLoad)/r.Load.Seconds(), float64(r.AAckedLoad)/r.Load.Seconds(),
				float64(r.AAckedPhase)/r.Phase.Seconds(), r.APeakHeld)
		}
		fmt.Fprintf(&b, "%-6s %-7s %5d %9s %9s %9s %4d %4d %9s | %s | %s → %s\n",
			r.Shape, r.Name, r.B.N, ms(r.B.P50), ms(r.B.P90), maxs, r.B.OverSecond, r.B.Missing, ms(r.BAnswer.P90),
			aCols, r.LoadBefore, r.LoadAfter)
		if r.BErrors > 0 || r.AErrors > 0 || r.ACut > 0 {
			fmt.Fprintf(&b, "       (%s: %d B and %d A API requests failed; %d of A's deliveries cut by the sender before the hold ended)\n",
				r.Name, r.BErrors, r.AErrors, r.ACut)
		}
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s, B's latencies ascending:", r.Shape, r.Name)
		for _, l := range r.B.Sorted {
			b.WriteString(" " + ms(l))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "B p50/p90/max: B's API answer → B's receiver (>1s: how many took longer); A arr/s: A's deliveries arriving at its receiver per s during the load; "+
		"A ack/s: acknowledged after the full hold, per s of the load (ack/s ph: per s of the whole phase, until B's last delivery); A peak: most requests held at once\n")
	return b.String()
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
}

// Loadavg is the 1-, 5- and 15-minute load average.
func Loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

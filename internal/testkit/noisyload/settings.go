package noisyload

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvVar opts in: the measurement takes minutes and holds thousands of connections.
const EnvVar = "REVOPS_MEASURE_NOISY"

// Require skips tb unless the measurement is opted in (EnvVar).
func Require(tb testing.TB) {
	tb.Helper()
	if os.Getenv(EnvVar) == "" {
		tb.Skipf("a measurement of minutes: %s=1 runs it", EnvVar)
	}
}

// SlotsVar is the worker's activity slots (CONTRACT §17), passed through when set.
const SlotsVar = "REVOPS_WORKER_ACTIVITY_SLOTS"

// AckSentence is what A's receiver answers (the default service name's sentence).
const AckSentence = "Revops API Event Received."

// Settings are the scenario's sizes: the by default, each overridable (for a
// quick look only; the figures in docs/benchmarks.md are taken with the defaults).
type Settings struct {
	Duration  time.Duration // of each phase's load: REVOPS_NOISY_SECONDS, 60
	Hold      time.Duration // A's receiver holds each request: REVOPS_NOISY_HOLD, 25s
	ARate     float64       // A's changes per second: REVOPS_NOISY_A_RATE, 4
	BRate     float64       // B's changes per second: 1
	Endpoints int           // A's endpoints: 16 (the most an environment may have)
	// Wait bounds how long after its phase's load B's last delivery may take; a B change
	// not delivered by then counts as missing: REVOPS_NOISY_WAIT, 4m.
	Wait time.Duration
}

// FromEnv returns the sizes, with the overrides above.
func FromEnv() Settings {
	s := Settings{Duration: time.Minute, Hold: 25 * time.Second, ARate: 4, BRate: 1, Endpoints: 16, Wait: 4 * time.Minute}
	if v, err := strconv.Atoi(os.Getenv("REVOPS_NOISY_SECONDS")); err == nil && v > 0 {
		s.Duration = time.Duration(v) * time.Second
	}
	if v, err := time.ParseDuration(os.Getenv("REVOPS_NOISY_HOLD")); err == nil && v >= 0 {
		s.Hold = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("REVOPS_NOISY_A_RATE"), 64); err == nil && v > 0 {
		s.ARate = v
	}
	if v, err := time.ParseDuration(os.Getenv("REVOPS_NOISY_WAIT")); err == nil && v > 0 {
		s.Wait = v
	}
	return s
}

// Slots describes the worker's activity slots for the table.
func Slots() string {
	if v := os.Getenv(SlotsVar); v != "" {
		return SlotsVar + "=" + v
	}
	return SlotsVar + " unset (the code's default; main: worker.Options{}, 1000)"
}

// SizesFromEnv is environment variable name's comma-separated positive counts (the sizes a
// benchmark runs), or def when it holds none.
func SizesFromEnv(name string, def ...int) []int {
	var out []int
	for _, f := range strings.Split(os.Getenv(name), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return def
	}
	return out
}

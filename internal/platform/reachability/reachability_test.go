package reachability

import (
	"context"
	"errors"
	"github.com/revops/revops/internal/testkit/syncbuf"
	"log/slog"
	"strings"
	"testing"
)

// An outage is logged once when it starts and once when it ends, however many probes
// fail in between; Reachable, Check and the gauge follow every probe.
func TestMonitorLogsTransitionsOnce(t *testing.T) {
	var buf syncbuf.Buffer
	var gauge []bool
	down := errors.New("connection refused")
	m := &Monitor{Name: "Temporal", Log: slog.New(slog.NewTextHandler(&buf, nil)),
		OnChange: func(up bool) { gauge = append(gauge, up) }}
	m.init()
	if !m.Reachable() {
		t.Fatal("unknown state should let callers try")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Check(ctx); !errors.Is(err, ErrNotChecked) {
		t.Fatalf("Check before any probe = %v, want ErrNotChecked", err)
	}

	steps := []error{down, down, down, nil, nil, down, nil}
	for _, err := range steps {
		m.Probe = func(context.Context) error { return err }
		m.probe(context.Background())
		if got := m.Check(context.Background()); !errors.Is(got, err) {
			t.Fatalf("Check = %v, want %v", got, err)
		}
		if m.Reachable() != (err == nil) {
			t.Fatalf("Reachable = %v after probe error %v", m.Reachable(), err)
		}
	}
	want := []string{"unreachable", "reachable again", "unreachable", "reachable again"}
	lines := buf.Lines()
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], "Temporal is "+w) {
			t.Errorf("line %d = %s, want %q", i, lines[i], w)
		}
	}
	if len(gauge) != len(steps) || gauge[0] || !gauge[3] || gauge[5] || !gauge[6] {
		t.Errorf("gauge updates %v", gauge)
	}
}

// A probe cut short by shutdown records nothing.
func TestMonitorIgnoresCancelledProbe(t *testing.T) {
	m := &Monitor{Name: "Temporal", Probe: func(ctx context.Context) error { return ctx.Err() }}
	m.init()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.Run(ctx)
	if err := m.Check(ctx); !errors.Is(err, ErrNotChecked) {
		t.Fatalf("Check = %v, want ErrNotChecked", err)
	}
}

package workflows

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/revops/revops/internal/platform/tracing"
)

// Every history recorded from a released workflow code (testdata/histories/<release>/,
// written by the recorder in internal/testkit/e2e) replays against the code of today: a deploy
// never breaks the runs still open (CONTRACT §10). A non-deterministic change fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/histories")
	}
	// Each release records every scenario a deployed run can be in (a later one may add some).
	releases, err := os.ReadDir(filepath.Join("testdata", "histories"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range releases {
		scenarios := []string{"delivered_first_attempt", "retried_then_delivered", "failed_all_attempts", "replayed_after_failure"}
		if n, err := strconv.Atoi(strings.TrimPrefix(rel.Name(), "v")); err == nil && n >= 7 { // MeterBackfill's first release
			scenarios = append(scenarios, "meter_backfill", "meter_backfill_deleted")
		}
		for _, scenario := range scenarios {
			if _, err := os.Stat(filepath.Join("testdata", "histories", rel.Name(), scenario+".json")); rel.IsDir() && err != nil {
				t.Errorf("release %s has no %s history", rel.Name(), scenario)
			}
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(rel.Name(), "v")); err == nil && n >= 8 { // CodeFanOut's first release
			for _, scenario := range []string{"delivered_first_attempt", "retried_then_delivered", "failed_all_attempts", "replayed_after_failure"} {
				versionEventsIn(t, filepath.Join("testdata", "histories", rel.Name(), scenario+".json"))
			}
		}
	}
	// Workers trace when tracing is on (CONTRACT §19): the histories replay through the
	// OpenTelemetry interceptor too, with a provider that samples everything, so that it
	// makes real spans and reads and writes their headers around every step.
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())))
	interceptors := map[string][]interceptor.WorkerInterceptor{"": nil, "/traced": {tracing.TemporalInterceptor()}}
	for _, file := range files {
		for mode, ics := range interceptors {
			t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file)+mode, func(t *testing.T) {
				replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: ics})
				if err != nil {
					t.Fatal(err)
				}
				RegisterWorkflows(replayer)
				logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
				if err := replayer.ReplayWorkflowHistoryFromJSONFile(logger, file); err != nil {
					t.Fatalf("replay %s: %v", file, err)
				}
			})
		}
	}
}

// versionEventsIn fails the test when a recorded run started with a code (CodeFanOut)
// holds a change-version marker or a search-attribute upsert: a new run's ordinary path
// asks no GetVersion, so that it makes no visibility write (CONTRACT §22).
func versionEventsIn(t *testing.T, file string) {
	t.Helper()
	js, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Events []struct{ EventType string } }
	if err := json.Unmarshal(js, &h); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, e := range h.Events {
		if e.EventType == "EVENT_TYPE_MARKER_RECORDED" || e.EventType == "EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES" {
			t.Errorf("%s holds %s: a new run asks no change version", file, e.EventType)
		}
	}
}

package devstack

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

const taskQueue = "devstack-test"

var eventType = temporal.NewSearchAttributeKeyKeyword("RevopsEventType")

func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, greetActivity, name).Get(ctx, &out)
	return out, err
}

func greetActivity(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

// testLogger writes to stderr rather than t.Log: server goroutines may still
// log a line while the test is finishing, which t.Log turns into a panic.
func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func startStack(t *testing.T, opts Options) *Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("stack started in %v (frontend %s, ui %s)", time.Since(began).Round(time.Millisecond), s.FrontendAddr(), s.UIURL())
	return s
}

func dial(t *testing.T, s *Stack, namespace string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.FrontendAddr(), Namespace: namespace, Logger: discardSDKLogger{}})
	if err != nil {
		t.Fatalf("dial %s: %v", s.FrontendAddr(), err)
	}
	return c
}

// TestStack covers the whole life cycle in one test to keep server starts
// few: first start, workflow + activity on a worker, search attribute query,
// UI, a second stack in parallel, busy ports, stop, restart on the same data
// dir (adding a search attribute through the operator API).
func TestStack(t *testing.T) {
	dir := t.TempDir()
	opts := Options{
		DataDir:          dir,
		FrontendAddr:     "127.0.0.1:0",
		UIAddr:           "127.0.0.1:0",
		Namespace:        "default",
		SearchAttributes: []string{"RevopsEventType", "RevopsObjectId", "RevopsEnvironment", "RevopsOrganizationId"},
		Logger:           testLogger(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	s := startStack(t, opts)
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()
	if _, err := os.Stat(dir + "/temporal.db"); err != nil {
		t.Fatalf("database file: %v", err)
	}

	c := dial(t, s, opts.Namespace)
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    "greet-1",
		TaskQueue:             taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(eventType.ValueSet("x")),
	}, greetWorkflow, "revops")
	if err != nil {
		t.Fatalf("execute workflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "hello revops" {
		t.Fatalf("workflow result = %q, want %q", got, "hello revops")
	}

	// Visibility is written asynchronously after the workflow closes.
	waitListed(ctx, t, c, opts.Namespace, "RevopsEventType = 'x'", "greet-1")
	if n := count(ctx, t, c, "RevopsEventType = 'nope'"); n != 0 {
		t.Fatalf("count for unknown value = %d, want 0", n)
	}

	checkUI(ctx, t, s.UIURL())

	t.Run("a second stack runs alongside", func(t *testing.T) {
		other := startStack(t, Options{DataDir: t.TempDir(), FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0", Logger: testLogger()})
		oc := dial(t, other, "default")
		_, err := oc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
		oc.Close()
		if err != nil {
			t.Errorf("describe namespace on second stack: %v", err)
		}
		if err := other.Stop(); err != nil {
			t.Errorf("stop second stack: %v", err)
		}
	})

	t.Run("busy ports are reported", func(t *testing.T) {
		_, err := Start(ctx, Options{DataDir: t.TempDir(), FrontendAddr: s.FrontendAddr(), Logger: testLogger()})
		if err == nil || !strings.Contains(err.Error(), "not available") {
			t.Fatalf("Start on busy frontend port: err = %v, want 'not available'", err)
		}
		uiHostPort := strings.TrimPrefix(s.UIURL(), "http://")
		_, err = Start(ctx, Options{DataDir: t.TempDir(), FrontendAddr: "127.0.0.1:0", UIAddr: uiHostPort, Logger: testLogger()})
		if err == nil || !strings.Contains(err.Error(), "temporal ui") {
			t.Fatalf("Start on busy UI port: err = %v, want a temporal ui error", err)
		}
	})

	w.Stop()
	c.Close()
	stopBegan := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	t.Logf("stack stopped in %v", time.Since(stopBegan).Round(time.Millisecond))
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// Restart on the same data dir, reusing the frontend port to prove it was
	// released, and add one attribute: that goes through the operator API
	// because the namespace already exists.
	opts.FrontendAddr = s.FrontendAddr()
	opts.SearchAttributes = append(opts.SearchAttributes, "RevopsExtra")
	s2 := startStack(t, opts)
	defer func() { _ = s2.Stop() }()
	c2 := dial(t, s2, opts.Namespace)
	defer c2.Close()

	desc, err := c2.DescribeWorkflowExecution(ctx, "greet-1", "")
	if err != nil {
		t.Fatalf("describe workflow after restart: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("workflow status after restart = %v, want COMPLETED", st)
	}
	waitListed(ctx, t, c2, opts.Namespace, "RevopsEventType = 'x'", "greet-1")
	if n := count(ctx, t, c2, "RevopsExtra = 'y'"); n != 0 {
		t.Fatalf("count on new attribute = %d, want 0", n)
	}
	if err := s2.Stop(); err != nil {
		t.Fatalf("Stop after restart: %v", err)
	}
}

func waitListed(ctx context.Context, t *testing.T, c client.Client, namespace, query, wantID string) {
	t.Helper()
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: namespace, Query: query})
		if err != nil {
			t.Fatalf("list %q: %v", query, err)
		}
		for _, e := range resp.GetExecutions() {
			if e.GetExecution().GetWorkflowId() == wantID {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("workflow %s never listed for %q", wantID, query)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// count counts the runs query matches. A search attribute added a moment ago is unknown
// to the frontend until its namespace cache refreshes (SearchAttributeSettle waits for
// that, but a starved machine may be late): a refused query is asked again for a while.
func count(ctx context.Context, t *testing.T, c client.Client, query string) int64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		if err == nil {
			return resp.GetCount()
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			t.Fatalf("count %q: %v", query, err)
		}
	}
}

func checkUI(ctx context.Context, t *testing.T, base string) {
	t.Helper()
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("UIURL = %q", base)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET UI: status %d", resp.StatusCode)
	}
	if !strings.Contains(strings.ToLower(string(body)), "<html") {
		t.Fatalf("GET UI: body is not HTML: %.200s", body)
	}
}

type discardSDKLogger struct{}

func (discardSDKLogger) Debug(string, ...any) {}
func (discardSDKLogger) Info(string, ...any)  {}
func (discardSDKLogger) Warn(string, ...any)  {}
func (discardSDKLogger) Error(string, ...any) {}

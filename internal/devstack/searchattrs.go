package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/searchattribute/sadefs"
)

const pollEvery = 50 * time.Millisecond

// validateSearchAttributes rejects names the server would refuse. The direct
// database path used for a new namespace does not validate, so check first.
func validateSearchAttributes(names []string) error {
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("empty search attribute name")
		}
		if sadefs.IsReserved(n) {
			return fmt.Errorf("search attribute %q is a reserved Temporal name", n)
		}
	}
	return nil
}

// dialWhenReady connects an SDK client once the frontend answers and the
// namespace is loaded. Server.Start returns before the gRPC services are
// serving, so this polls until ctx expires.
func dialWhenReady(ctx context.Context, hostPort, namespace string, logger *slog.Logger) (client.Client, error) {
	var lastErr error
	for {
		c, err := client.DialContext(ctx, client.Options{
			HostPort:  hostPort,
			Namespace: namespace,
			Logger:    sdklog.NewStructuredLogger(logger),
		})
		if err == nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx,
				&workflowservice.DescribeNamespaceRequest{Namespace: namespace})
			if err == nil {
				return c, nil
			}
			c.Close()
		}
		lastErr = err
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return nil, fmt.Errorf("wait for temporal frontend at %s: %w (last error: %v)", hostPort, err, lastErr)
		}
	}
}

// ensureSearchAttributes registers any missing Keyword attributes on the
// namespace. With SQL visibility, AddSearchAttributes maps each name onto a
// pre-allocated KeywordNN column by storing an alias in the namespace record
// (cluster metadata does not change), so it is a no-op for names already there.
func ensureSearchAttributes(ctx context.Context, c client.Client, namespace string, names []string) error {
	have, err := listSearchAttributes(ctx, c, namespace)
	if err != nil {
		return err
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, n := range names {
		t, ok := have[n]
		switch {
		case !ok:
			missing[n] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		case t != enumspb.INDEXED_VALUE_TYPE_KEYWORD:
			return fmt.Errorf("search attribute %s already exists as %s, want Keyword", n, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}

	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("add search attributes %v to namespace %s: %w", keys(missing), namespace, err)
	}
	for {
		have, err := listSearchAttributes(ctx, c, namespace)
		if err != nil {
			return err
		}
		if containsAll(have, names) {
			break
		}
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return fmt.Errorf("wait for search attributes %v: %w", keys(missing), err)
		}
	}
	// The alias now is in the database, but frontend, history and matching
	// each cache namespaces and only reload them every namespaceRefresh.
	// Waiting two intervals guarantees every service can map the new names.
	return sleepCtx(ctx, 2*namespaceRefresh)
}

func listSearchAttributes(ctx context.Context, c client.Client, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of namespace %s: %w", namespace, err)
	}
	return resp.GetCustomAttributes(), nil
}

func containsAll(have map[string]enumspb.IndexedValueType, names []string) bool {
	for _, n := range names {
		if _, ok := have[n]; !ok {
			return false
		}
	}
	return true
}

func keys(m map[string]enumspb.IndexedValueType) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

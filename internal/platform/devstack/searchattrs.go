package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/revops/revops/internal/platform/temporalsetup"
)

const pollEvery = 50 * time.Millisecond

// keywords types each name as Keyword, the only type devstack's callers ask for.
func keywords(names []string) map[string]enumspb.IndexedValueType {
	m := make(map[string]enumspb.IndexedValueType, len(names))
	for _, n := range names {
		m[n] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return m
}

// validateSearchAttributes rejects names the server would refuse. The direct
// database path used for a new namespace does not validate, so check first.
func validateSearchAttributes(names []string) error {
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("empty search attribute name")
		}
	}
	return temporalsetup.ValidateSearchAttributes(keywords(names))
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
		if err := temporalsetup.Sleep(ctx, pollEvery); err != nil {
			return nil, fmt.Errorf("wait for temporal frontend at %s: %w (last error: %v)", hostPort, err, lastErr)
		}
	}
}

// SearchAttributeSettle is how long to wait after adding search attributes: frontend,
// history and matching each cache namespaces and reload them every namespaceRefresh, so
// two intervals guarantee every service maps the new names.
const SearchAttributeSettle = 2 * namespaceRefresh

// ensureSearchAttributes registers any missing Keyword attributes on the namespace
// (temporalsetup.EnsureSearchAttributes), then waits for every service to see them.
func ensureSearchAttributes(ctx context.Context, c client.Client, namespace string, names []string) error {
	added, err := temporalsetup.EnsureSearchAttributes(ctx, c, namespace, keywords(names))
	if err != nil || len(added) == 0 {
		return err
	}
	return temporalsetup.Sleep(ctx, SearchAttributeSettle)
}

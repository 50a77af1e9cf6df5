package prodlike

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/revops/revops/workflows"
)

// temporalSetup runs `revops temporal-setup` (CONTRACT §16). While the binary has no such
// command (it lands with issue 15's own step), the stack registers the namespace and the
// search attributes itself, the way that command will, and says so.
func (s *Stack) temporalSetup(ctx context.Context) (string, error) {
	help, _ := s.Revops("help")
	if strings.Contains(help, "temporal-setup") {
		out, err := s.Revops("temporal-setup")
		if err != nil {
			return "", err
		}
		return "revops temporal-setup: " + firstLine(out), nil
	}
	attrs := map[string]enumspb.IndexedValueType{workflows.AttrEndpointIDs: enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST}
	for _, a := range workflows.SearchAttributes {
		attrs[a] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	if err := registerNamespace(ctx, s.Temporal.Address, "default", 72*time.Hour, attrs); err != nil {
		return "", err
	}
	return "namespace and search attributes registered by the test (this revops has no temporal-setup command yet)", nil
}

// registerNamespace creates the namespace when missing and adds the search attributes,
// then waits until the server lists them.
func registerNamespace(ctx context.Context, address, namespace string, retention time.Duration, want map[string]enumspb.IndexedValueType) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace, Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("dial temporal: %w", err)
	}
	defer c.Close()
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        namespace,
		WorkflowExecutionRetentionPeriod: durationpb.New(retention),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("register namespace %s: %w", namespace, err)
	}
	for {
		// The namespace reaches the frontend's cache within its refresh interval: until
		// then adding attributes answers NotFound.
		_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: want})
		if err == nil || strings.Contains(err.Error(), "already exists") {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("add search attributes: %w", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for {
		resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		if err == nil && hasAll(resp.GetCustomAttributes(), want) {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("search attributes not listed: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Every service maps attribute names through its namespace cache, refreshed every
	// 2 s (system.namespaceCacheRefreshInterval): wait two refreshes before any start.
	time.Sleep(4 * time.Second)
	return nil
}

func hasAll(have, want map[string]enumspb.IndexedValueType) bool {
	for n := range want {
		if _, ok := have[n]; !ok {
			return false
		}
	}
	return true
}

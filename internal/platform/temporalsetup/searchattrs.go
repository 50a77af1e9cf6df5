package temporalsetup

import (
	"context"
	"fmt"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/searchattribute/sadefs"
)

// ValidateSearchAttributes rejects names the server would refuse. The direct database
// path `revops dev` uses for a new namespace does not validate, so check first.
func ValidateSearchAttributes(attrs map[string]enumspb.IndexedValueType) error {
	for n := range attrs {
		if n == "" {
			return fmt.Errorf("empty search attribute name")
		}
		if sadefs.IsReserved(n) {
			return fmt.Errorf("search attribute %q is a reserved Temporal name", n)
		}
	}
	return nil
}

// EnsureSearchAttributes registers the attributes the namespace lacks and returns their
// names once the server lists them. With SQL visibility, AddSearchAttributes maps each
// name onto a pre-allocated column by storing an alias in the namespace record, so names
// already there are left alone. One that exists with another type is an error: changing
// it would orphan what runs recorded under it.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enumspb.IndexedValueType) ([]string, error) {
	if err := ValidateSearchAttributes(want); err != nil {
		return nil, err
	}
	var have map[string]enumspb.IndexedValueType
	err := untilServed(ctx, "list search attributes", func() (err error) {
		have, err = listSearchAttributes(ctx, c, namespace)
		return err
	})
	if err != nil {
		return nil, err
	}
	missing := map[string]enumspb.IndexedValueType{}
	for n, typ := range want {
		got, ok := have[n]
		switch {
		case !ok:
			missing[n] = typ
		case got != typ:
			return nil, fmt.Errorf("search attribute %s already exists as %s, want %s", n, got, typ)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	names := keys(missing)
	if err := untilServed(ctx, "add search attributes", func() error {
		_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace:        namespace,
			SearchAttributes: missing,
		})
		return err
	}); err != nil {
		return nil, fmt.Errorf("add search attributes %v to namespace %s: %w", names, namespace, err)
	}
	for {
		have, err := listSearchAttributes(ctx, c, namespace)
		if err != nil {
			return nil, err
		}
		if containsAll(have, want) {
			return names, nil
		}
		if err := Sleep(ctx, pollEvery); err != nil {
			return nil, fmt.Errorf("wait for search attributes %v: %w", names, err)
		}
	}
}

func listSearchAttributes(ctx context.Context, c client.Client, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of namespace %s: %w", namespace, err)
	}
	return resp.GetCustomAttributes(), nil
}

func containsAll(have, want map[string]enumspb.IndexedValueType) bool {
	for n := range want {
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

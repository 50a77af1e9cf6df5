package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/testkit/testdb"
)

func TestEnsureIsIdempotent(t *testing.T) {
	ctx := context.Background()
	st := testdb.New(t)
	km := keys.NewManager(st)
	dir := t.TempDir()

	first, err := Ensure(ctx, st, km, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.Password == "" || len(first.Keys) != 4 {
		t.Fatalf("first start: %+v", first)
	}
	fi, err := os.Stat(filepath.Join(dir, "dev-keys"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("dev-keys file: %v %v", fi, err)
	}
	second, err := Ensure(ctx, st, keys.NewManager(st), dir)
	if err != nil {
		t.Fatal(err)
	}
	if second.Created || second.Password != "" || second.OrganizationID != first.OrganizationID {
		t.Fatalf("second start changed things: %+v", second)
	}
	for i, k := range second.Keys {
		if k != first.Keys[i] {
			t.Errorf("key %d changed: %v -> %v", i, first.Keys[i], k)
		}
		p, err := km.Authenticate(ctx, k.Plain)
		if err != nil || p.Env.Name != k.Env || p.Type != k.Type {
			t.Errorf("key %s does not authenticate as %s/%s: %+v %v", k.Plain[:11], k.Type, k.Env, p, err)
		}
	}
	all, _ := st.APIKeys(ctx, first.OrganizationID, "")
	if len(all) != 4 {
		t.Errorf("restart created keys: %d in store", len(all))
	}

	// Losing the key file makes new keys for the same organization, no second org.
	os.Remove(filepath.Join(dir, "dev-keys"))
	third, err := Ensure(ctx, st, km, dir)
	if err != nil || third.OrganizationID != first.OrganizationID || third.Created {
		t.Fatalf("after losing dev-keys: %+v %v", third, err)
	}
	orgsList, _ := st.Organizations(ctx)
	if len(orgsList) != 1 {
		t.Errorf("%d organizations", len(orgsList))
	}
}

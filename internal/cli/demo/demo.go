// Package demo prepares the demo organization of `revops dev`: a dashboard user and one
// key of each kind, kept in <data dir>/dev-keys (0600) so every start prints the same keys.
package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
)

// Email of the demo dashboard user.
const Email = "demo@revops.local"

// Key is one demo key, as printed: "<type> <env> key: <key>".
type Key struct{ Type, Env, Plain string }

// Result is what a start prints.
type Result struct {
	OrganizationID string
	Keys           []Key
	Password       string // set on first start only
	Created        bool
}

var kinds = []struct{ typ, env string }{
	{"public", "live"}, {"secret", "live"}, {"public", "sandbox"}, {"secret", "sandbox"},
}

// Ensure returns the demo organization's keys, creating the organization, user and keys
// when they do not exist yet (or when the key file no longer matches the database).
func Ensure(ctx context.Context, st *store.Store, km *keys.Manager, dataDir string) (Result, error) {
	path := filepath.Join(dataDir, "dev-keys")
	if saved, err := readKeys(path); err == nil && len(saved) == len(kinds) {
		p, err := km.Authenticate(ctx, saved[0].Plain)
		if err == nil {
			return Result{OrganizationID: p.Env.OrganizationID, Keys: saved}, nil
		}
		if !errors.Is(err, keys.ErrInvalid) && !errors.Is(err, keys.ErrExpired) {
			return Result{}, err
		}
	}
	res := Result{}
	u, err := st.UserByEmail(ctx, Email)
	switch {
	case err == nil:
		res.OrganizationID = u.OrganizationID
	case errors.Is(err, apperr.ErrNotFound):
		org, password, err := orgs.Create(ctx, st, "Demo Org", Email)
		if err != nil {
			return Result{}, fmt.Errorf("create demo organization: %w", err)
		}
		res.OrganizationID, res.Password, res.Created = org.ID, password, true
	default:
		return Result{}, err
	}
	for _, k := range kinds {
		created, err := km.Create(ctx, res.OrganizationID, k.env, k.typ)
		if err != nil {
			return Result{}, fmt.Errorf("create demo %s %s key: %w", k.typ, k.env, err)
		}
		res.Keys = append(res.Keys, Key{Type: k.typ, Env: k.env, Plain: created.Plain})
	}
	if err := writeKeys(path, res.Keys); err != nil {
		return Result{}, err
	}
	return res, nil
}

// Line renders a key as CONTRACT §12 prints it.
func (k Key) Line() string { return fmt.Sprintf("%s %s key: %s", k.Type, k.Env, k.Plain) }

func writeKeys(path string, ks []Key) error {
	var b strings.Builder
	for _, k := range ks {
		b.WriteString(k.Line() + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func readKeys(path string) ([]Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ks []Key
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var k Key
		if _, err := fmt.Sscanf(sc.Text(), "%s %s key: %s", &k.Type, &k.Env, &k.Plain); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		ks = append(ks, k)
	}
	return ks, sc.Err()
}

// SavedKey returns the demo key of a type and environment kept in dataDir by `revops dev`.
func SavedKey(dataDir, keyType, env string) (string, error) {
	ks, err := readKeys(filepath.Join(dataDir, "dev-keys"))
	if err != nil {
		return "", fmt.Errorf("no demo keys in %s (start `revops dev` first, or pass --api-key): %w", dataDir, err)
	}
	for _, k := range ks {
		if k.Type == keyType && k.Env == env {
			return k.Plain, nil
		}
	}
	return "", fmt.Errorf("no %s %s key in %s", keyType, env, dataDir)
}

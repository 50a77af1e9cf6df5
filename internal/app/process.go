package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/platform/buildinfo"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/store"
)

// What the commands of cmd/revops open the same way: their logger, their database and
// their Temporal client.

// NewLogger logs text in dev and JSON in production.
func NewLogger(cfg config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Mode == "dev" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// LogStart is the first line every long-running command logs: what it is and the build.
func LogStart(log *slog.Logger, command string) {
	log.Info("revops starting", append([]any{"command", command}, buildinfo.Read().LogAttrs()...)...)
}

// OpenStore opens the database of a serving process (api, worker, serve), which does not
// migrate (CONTRACT §16: `revops migrate` is its own step, run once per release): it
// refuses a schema that is behind or ahead of this binary.
//
// It also refuses to run without REVOPS_ENCRYPTION_KEYS, or with keys that do not open
// the secrets stored (CONTRACT §25): a serving process writes signing secrets, and would
// otherwise either keep them in clear or fail on every endpoint it reads.
func OpenStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	if cfg.Keyring == nil {
		return nil, fmt.Errorf("%s is not set: signing secrets and custom header values are kept encrypted in the database (CONTRACT §25); generate a key with `openssl rand -base64 32` (docs/production.md, \"Secrets at rest\")", config.EncryptionKeysEnv)
	}
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, StoreOptions(cfg), log)
	if err != nil {
		return nil, err
	}
	if err := st.CheckSchema(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	use, err := st.CheckKeyring(ctx)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("%s: %w", config.EncryptionKeysEnv, err)
	}
	if use.Clear > 0 {
		log.Warn("secrets stored in clear: run `revops migrate` to encrypt them", "secrets", use.Clear)
	}
	log.Info("secrets at rest", "bound_to_row", st.SealsBound(), "unbound", use.Unbound) // docs/production.md
	metrics.RegisterOutbox(st.OutboxBacklogAge)
	return st, nil
}

// WithDataDirKey fills cfg.Keyring, when REVOPS_ENCRYPTION_KEYS is unset, from the key
// `revops dev` keeps in its data dir: dev creates it at its first start (create); the
// CLI and migrate read it if it is there, so that they open a dev database's secrets.
// api, worker and serve take the variable only.
func WithDataDirKey(cfg *config.Config, create bool) error {
	if cfg.Keyring != nil {
		return nil
	}
	path := filepath.Join(cfg.DataDir, secretbox.FileName)
	load := secretbox.LoadFile
	if create {
		load = secretbox.EnsureFile
	}
	kr, err := load(path)
	if err != nil {
		return err
	}
	cfg.Keyring = kr
	return nil
}

// SealSecrets moves every stored secret onto the first key (clear ones of the release
// before, and those an older key sealed), after checking the keys open what is stored.
// It says what it did through report.
func SealSecrets(ctx context.Context, st *store.Store, cfg config.Config, report func(msg string)) error {
	if cfg.Keyring == nil {
		use, err := st.SecretKeyUse(ctx)
		if err != nil {
			return err
		}
		if use.Clear > 0 || len(use.KeyIDs) > 0 {
			return fmt.Errorf("%s is not set: %d secret(s) stored in clear, and secrets sealed under key id(s) %v, stay as they are; set it and run `revops migrate` again (docs/production.md, \"Secrets at rest\")",
				config.EncryptionKeysEnv, use.Clear, use.KeyIDs)
		}
		report("no secret stored; REVOPS_ENCRYPTION_KEYS is not set (api, worker and serve need it)")
		return nil
	}
	if _, err := st.CheckKeyring(ctx); err != nil {
		return fmt.Errorf("%s: %w", config.EncryptionKeysEnv, err)
	}
	n, err := st.Reseal(ctx, store.ResealBatch)
	if err != nil {
		return err
	}
	report(fmt.Sprintf("secrets sealed under key id %s: %d endpoint(s) re-sealed", cfg.Keyring.Current(), n))
	if st.SealsBound() {
		report("secrets are bound to their row")
		return nil
	}
	// The unbound form is written until the operator says no process of the release
	// before is left (CONTRACT §25, rolling upgrades).
	report(fmt.Sprintf("secrets are written unbound, as the release before reads them: once every process runs this release, set %s=true on all of them and run `revops migrate` again to bind the stored ones to their row (docs/production.md, \"Secrets at rest\")",
		config.SealBoundEnv))
	return nil
}

// OpenMigratedStore opens the database and applies pending migrations first (revops dev,
// where one process is the whole deployment).
func OpenMigratedStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, StoreOptions(cfg), log)
	if err != nil {
		return nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if len(applied) > 0 {
		log.Info("migrations applied", "migrations", strings.Join(applied, ","))
	}
	if cfg.Keyring != nil {
		if err := SealSecrets(ctx, st, cfg, func(msg string) { log.Debug(msg) }); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	metrics.RegisterOutbox(st.OutboxBacklogAge)
	return st, nil
}

// StoreOptions are the database bounds of the configuration (REVOPS_DB_*, CONTRACT §21);
// jobs keep the store's own timeouts.
func StoreOptions(cfg config.Config) store.Options {
	o := store.DefaultOptions()
	o.Connections, o.JobConnections = cfg.DBConnections, cfg.DBJobConnections
	o.LockTimeout, o.StatementTimeout = cfg.DBLockTimeout, cfg.DBStatementTimeout
	o.Keyring, o.SealBound = cfg.Keyring, cfg.SealBound.Value()
	return o
}

// DialTemporal connects to the Temporal frontend; the SDK logs at warn and above only.
func DialTemporal(ctx context.Context, cfg config.Config, log *slog.Logger) (client.Client, error) {
	c, err := client.DialContext(ctx, TemporalOptions(cfg, log))
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", cfg.TemporalAddress, err)
	}
	return c, nil
}

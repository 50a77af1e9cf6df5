package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/apikey"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
)

var stdout io.Writer = os.Stdout

func runMigrate(ctx context.Context, args []string) error {
	cfg, err := loadConfig(newFlagSet("migrate"), "migrate", args)
	if err != nil {
		return err
	}
	app.LogStart(app.NewLogger(cfg).With("component", "migrate"), "migrate")
	if err := app.WithDataDirKey(&cfg, false); err != nil {
		return err
	}
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, app.StoreOptions(cfg), nil) // Migrate lifts the timeouts it runs under
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	for _, m := range applied {
		fmt.Fprintln(stdout, "applied", m)
	}
	if err != nil {
		return err
	}
	// A database a newer release migrated is not this release's to serve.
	if err := st.CheckSchema(ctx); err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "database is up to date (schema version %d)\n", store.SchemaVersion())
	}
	return app.SealSecrets(ctx, st, cfg, func(msg string) { fmt.Fprintln(stdout, msg) })
}

// adminStore opens and migrates the database for a CLI command (an operator's one-off,
// not a replica), and refuses one a newer release migrated.
func adminStore(ctx context.Context, fs *flag.FlagSet, name string, args []string) (*store.Store, config.Config, error) {
	cfg, err := loadConfig(fs, "cli", args)
	if err != nil {
		return nil, cfg, err
	}
	log := app.NewLogger(cfg)
	if err := app.WithDataDirKey(&cfg, false); err != nil {
		return nil, cfg, err
	}
	st, err := app.OpenMigratedStore(ctx, cfg, log)
	if err != nil {
		return nil, cfg, err
	}
	if err := st.CheckSchema(ctx); err != nil {
		_ = st.Close()
		return nil, cfg, err
	}
	return st, cfg, nil
}

func subcommand(args []string, names ...string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, fmt.Errorf("missing subcommand: one of %v", names)
	}
	for _, n := range names {
		if args[0] == n {
			return n, args[1:], nil
		}
	}
	return "", nil, fmt.Errorf("unknown subcommand %q: want one of %v", args[0], names)
}

func runOrgs(ctx context.Context, args []string) error {
	sub, args, err := subcommand(args, "create", "list", "reset-password")
	if err != nil {
		return err
	}
	fs := newFlagSet("orgs " + sub)
	name := fs.String("name", "", "organization name (create)")
	email := fs.String("email", "", "dashboard user's email (create, reset-password)")
	st, _, err := adminStore(ctx, fs, sub, args)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "create":
		org, password, err := orgs.Create(ctx, st, *name, *email)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "organization: %s (%s)\ndashboard login: %s password: %s\n(the password is shown only once)\n", org.ID, org.Name, *email, password)
	case "list":
		list, err := st.Organizations(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tCREATED")
		for _, o := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", o.ID, o.Name, o.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case "reset-password":
		password, err := orgs.ResetPassword(ctx, st, *email)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dashboard login: %s password: %s\n(every dashboard session of this user has ended)\n", *email, password)
	}
	return nil
}

func runKeys(ctx context.Context, args []string) error {
	sub, args, err := subcommand(args, "create", "list", "roll", "revoke")
	if err != nil {
		return err
	}
	fs := newFlagSet("keys " + sub)
	org := fs.String("org", "", "organization id (required)")
	env := fs.String("env", "", "environment: live or sandbox (create; optional filter for list)")
	typ := fs.String("type", "secret", "key type: public or secret (create)")
	id := fs.String("id", "", "key id (roll, revoke)")
	expiresIn := fs.Duration("expires-in", 24*time.Hour, "how long a rolled key keeps working (roll)")
	st, _, err := adminStore(ctx, fs, sub, args)
	if err != nil {
		return err
	}
	defer st.Close()
	if *org == "" {
		return errors.New("--org is required (see `revops orgs list`)")
	}
	if (sub == "roll" || sub == "revoke") && *id == "" {
		return errors.New("--id is required (see `revops keys list`)")
	}
	km := keys.NewManager(st)
	switch sub {
	case "create":
		k, err := km.Create(ctx, *org, *env, *typ)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s key: %s\nid: %s\n(the key is shown only once)\n", k.Key.Type, k.Key.Environment, k.Plain, k.Key.ID)
	case "list":
		list, err := km.List(ctx, *org, *env)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKEY\tTYPE\tENV\tSTATE\tCREATED\tEXPIRES")
		now := time.Now()
		for _, k := range list {
			exp := "-"
			if k.ExpiresAt != nil {
				exp = k.ExpiresAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, apikey.Mask(k.Prefix, k.Last4), k.Type, k.Environment,
				keys.State(k, now), k.CreatedAt.Format(time.RFC3339), exp)
		}
		return tw.Flush()
	case "roll":
		k, err := km.Roll(ctx, *org, *id, *expiresIn)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s key: %s\nid: %s\nthe old key keeps working until %s\n", k.Key.Type, k.Key.Environment, k.Plain, k.Key.ID,
			time.Now().Add(*expiresIn).UTC().Format(time.RFC3339))
	case "revoke":
		k, err := km.Revoke(ctx, *org, *id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", apikey.Mask(k.Prefix, k.Last4))
	}
	return nil
}

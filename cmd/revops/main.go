// Command revops is the Revops service: API, webhook worker, embedded dev stack and the
// operator's CLI. This package only parses flags and wires parts together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/revops/revops/internal/cli/replaycli"
	"github.com/revops/revops/internal/cli/webhookstatus"
	"github.com/revops/revops/internal/platform/buildinfo"
)

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string) error
}

var commands = []command{
	{"dev", "run everything locally: embedded Temporal + UI, SQLite, API and worker", runDev},
	{"serve", "run the API and the worker in one process (production)", runServe},
	{"api", "run the API only (production)", runAPI},
	{"worker", "run the webhook worker only (production)", runWorker},
	{"migrate", "apply database migrations (run once per release, before api and worker)", runMigrate},
	{"temporal-setup", "register the Temporal namespace, search attributes and retention Schedule (idempotent)", runTemporalSetup},
	{"orgs", "manage organizations: create, list, reset-password", runOrgs},
	{"keys", "manage API keys: create, list, roll, revoke", runKeys},
	{"webhooks", "webhook tools: revops webhooks replay ID… | --failed --since 24h [--type T] [--env E] [--dry-run]; revops webhooks status", runWebhooks},
	{"listen", "local HTTPS webhook receiver on its own temporary sandbox endpoint (--events to choose types), prints deliveries", runListen},
	{"trigger", "emit one event type in sandbox (creates the objects and transitions it needs)", runTrigger},
	{"healthcheck", "probe a URL (container health checks)", runHealthcheck},
	{"version", "print the version", runVersion},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "revops:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:])
		}
	}
	usage()
	return fmt.Errorf("unknown command %q", args[0])
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: revops <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(os.Stderr, "\nEvery flag can also be set with its REVOPS_* variable; see README.")
}

// runVersion prints the module version, the VCS revision and the Temporal server and SDK
// the binary was built with.
func runVersion(_ context.Context, _ []string) error {
	fmt.Println(buildinfo.Read())
	return nil
}

func runWebhooks(ctx context.Context, args []string) error {
	switch {
	case len(args) > 0 && args[0] == "replay":
		return replaycli.Run(ctx, args[1:], os.Stdout, os.Stderr)
	case len(args) > 0 && args[0] == "status":
		return webhookstatus.Run(ctx, args[1:], os.Stdout, os.Stderr)
	}
	return errors.New("usage: revops webhooks replay ID… | revops webhooks replay --failed --since 24h [--type T] [--env sandbox|live] [--dry-run]\n" +
		"       revops webhooks status [--env sandbox|live] [--latency=false]")
}

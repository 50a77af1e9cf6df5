package prodlike

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"text/template"
	"time"

	"go.temporal.io/sdk/client"
)

// temporalPorts are the Temporal server's listen ports. Membership ports end up in a
// smallint column (cluster_membership), so every port stays below 32768: Linux hands
// out ephemeral ports above that, hence a search of our own.
type temporalPorts struct {
	Frontend, FrontendMembership int
	History, HistoryMembership   int
	Matching, MatchingMembership int
	Worker, WorkerMembership     int
	Pprof                        int
}

// freeLowPorts finds n distinct ports in [20000, 32000) that accept a listener now.
func freeLowPorts(n int) ([]int, error) {
	var ports []int
	seen := map[int]bool{}
	for tries := 0; len(ports) < n && tries < 1000; tries++ {
		p := 20000 + rand.IntN(12000)
		if seen[p] {
			continue
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found only %d free ports below 32768", len(ports))
	}
	return ports, nil
}

// createTemporalSchema creates Temporal's two databases and their schema the way an
// operator does with temporal-sql-tool (and the compose file's temporal-schema service):
// version tables, then every versioned step of the release (the tool embeds them).
func createTemporalSchema(sqlTool, plugin string, pg *Postgres, env []string) error {
	for db, schema := range map[string]string{
		"temporal":            "postgresql/v12/temporal",
		"temporal_visibility": "postgresql/v12/visibility",
	} {
		base := []string{"--plugin", plugin, "--ep", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-u", "postgres", "--db", db}
		for _, step := range [][]string{
			{"create"},
			{"setup-schema", "-v", "0.0"},
			{"update-schema", "--schema-name", schema},
		} {
			if _, err := run(env, nil, "", sqlTool, append(append([]string{}, base...), step...)...); err != nil {
				return fmt.Errorf("temporal schema of %s: %w", db, err)
			}
		}
	}
	return nil
}

// The server's configuration: what an operator writes for a single-host cluster on
// PostgreSQL (the development-postgres12.yaml of the server's repository, trimmed), with
// our ports and the dynamic config we ship.
var serverConfig = template.Must(template.New("temporal.yaml").Parse(`log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: {{.Shards}}
  datastores:
    postgres-default:
      sql:
        pluginName: {{.Plugin}}
        databaseName: temporal
        connectAddr: "127.0.0.1:{{.PG}}"
        connectProtocol: tcp
        user: postgres
        password: ""
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    postgres-visibility:
      sql:
        pluginName: {{.Plugin}}
        databaseName: temporal_visibility
        connectAddr: "127.0.0.1:{{.PG}}"
        connectProtocol: tcp
        user: postgres
        password: ""
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  pprof:
    port: {{.P.Pprof}}
    host: 127.0.0.1
services:
  frontend:
    rpc:
      grpcPort: {{.P.Frontend}}
      membershipPort: {{.P.FrontendMembership}}
      bindOnLocalHost: true
  history:
    rpc:
      grpcPort: {{.P.History}}
      membershipPort: {{.P.HistoryMembership}}
      bindOnLocalHost: true
  matching:
    rpc:
      grpcPort: {{.P.Matching}}
      membershipPort: {{.P.MatchingMembership}}
      bindOnLocalHost: true
  worker:
    rpc:
      grpcPort: {{.P.Worker}}
      membershipPort: {{.P.WorkerMembership}}
      bindOnLocalHost: true
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:{{.P.Frontend}}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "{{.DynamicConfig}}"
  pollInterval: 10s
`))

// Temporal is the stack's Temporal server process.
type Temporal struct {
	Address string // frontend host:port
	// PprofURL is the server's Go profiler (net/http/pprof), on loopback.
	PprofURL string
	bin      string
	config   string
	log      string
	env      []string
	proc     *Proc
}

func newTemporal(bin, dir, dynamicConfig string, pgPort int, plugin string, shards int) (*Temporal, error) {
	ps, err := freeLowPorts(9)
	if err != nil {
		return nil, err
	}
	p := temporalPorts{ps[0], ps[1], ps[2], ps[3], ps[4], ps[5], ps[6], ps[7], ps[8]}
	cfg := filepath.Join(dir, "temporal.yaml")
	f, err := os.Create(cfg)
	if err != nil {
		return nil, err
	}
	err = serverConfig.Execute(f, map[string]any{"PG": pgPort, "P": p, "DynamicConfig": dynamicConfig, "Plugin": plugin, "Shards": shards})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &Temporal{
		Address:  "127.0.0.1:" + strconv.Itoa(p.Frontend),
		PprofURL: "http://127.0.0.1:" + strconv.Itoa(p.Pprof) + "/debug/pprof",
		bin:      bin, config: cfg, log: filepath.Join(dir, "temporal.log"),
		env: []string{"PATH=/usr/bin:/bin", "HOME=" + dir},
	}, nil
}

// Start starts the server and waits until its frontend answers health checks.
func (tp *Temporal) Start(ctx context.Context) error {
	proc, err := startProc("temporal", tp.log, tp.env, nil, tp.bin, "--config-file", tp.config, "--allow-no-auth", "start")
	if err != nil {
		return err
	}
	tp.proc = proc
	return tp.waitServing(ctx)
}

// Restart stops the server (SIGTERM, as an orchestrator's rolling restart does; SIGKILL
// after 30 s) and starts it again on the same ports and database.
func (tp *Temporal) Restart(ctx context.Context) error {
	tp.proc.Stop(30 * time.Second)
	return tp.Start(ctx)
}

// Stop stops the server.
func (tp *Temporal) Stop() {
	if tp.proc != nil {
		tp.proc.Stop(30 * time.Second)
	}
}

// Pid is the running server's process id.
func (tp *Temporal) Pid() int { return tp.proc.Pid() }

// Log is the end of the server's log.
func (tp *Temporal) Log(lines int) string { return tailFile(tp.log, lines) }

func (tp *Temporal) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last error
	for {
		if done, err := tp.proc.Exited(); done {
			return fmt.Errorf("temporal server exited: %v\n%s", err, tp.Log(30))
		}
		c, err := client.DialContext(ctx, client.Options{HostPort: tp.Address, Logger: quiet{}})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporal server at %s not serving after 2 min: %v\n%s", tp.Address, last, tp.Log(30))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// quiet drops the SDK's logs (dial retries while the server starts).
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

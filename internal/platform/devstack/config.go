package devstack

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
)

const (
	// clusterName is persisted in the database (cluster metadata and each
	// namespace's replication config), so it must never change between runs.
	clusterName = "active"
	storeName   = "sqlite-default"

	// numHistoryShards is fixed when the database is created; later changes
	// are ignored by the server (with a warning). A single shard is what the
	// Temporal CLI dev server uses: on 2 cores with one SQLite connection more
	// shards only add queue processors competing for the same writer
	// (measured: 4 shards cost ~8% more CPU per workflow than 1).
	numHistoryShards = 1
)

// servicePorts are the gRPC ports of the four Temporal services.
type servicePorts struct {
	frontend endpoint
	history  int
	matching int
	worker   int
}

// sqlConfig describes the SQLite file. WAL lets readers (visibility queries,
// the UI) proceed while the single writer commits; synchronous=NORMAL is
// crash-safe for the process in WAL mode (a power loss may drop the last
// commits) and avoids an fsync per transaction.
func sqlConfig(dbPath string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: dbPath,
		ConnectAttributes: map[string]string{
			"mode":         "rwc",
			"journal_mode": "wal",
			"synchronous":  "normal",
			"busy_timeout": "10000",
		},
		// One connection serialises all writers inside the process instead of
		// letting them fight over SQLite's file lock (SQLITE_BUSY).
		MaxConns:     1,
		MaxIdleConns: 1,
	}
}

// serverConfig builds the static Temporal configuration for one in-process
// cluster with all services on loopback.
func serverConfig(sql *config.SQL, ports servicePorts) *config.Config {
	frontendAddr := ports.frontend.dialAddr()
	internal := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: loopback}}
	}

	var c config.Config
	// Static membership (see staticHosts) means no ringpop, so no membership
	// ports are opened; these values only matter for the host identity.
	c.Global.Membership.MaxJoinDuration = 30 * time.Second
	c.Global.Membership.BroadcastAddress = loopback
	// Global.Metrics stays nil: no Prometheus listener, no extra port.

	c.Persistence.DefaultStore = storeName
	c.Persistence.VisibilityStore = storeName
	c.Persistence.NumHistoryShards = numHistoryShards
	c.Persistence.DataStores = map[string]config.DataStore{storeName: {SQL: sql}}

	c.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontendAddr,
			},
		},
	}
	c.DCRedirectionPolicy.Policy = "noop"

	c.Services = map[string]config.Service{
		// HTTPPort stays 0: the HTTP API is off, the UI talks gRPC.
		string(primitives.FrontendService): {RPC: config.RPC{
			GRPCPort: ports.frontend.port,
			BindOnIP: ports.frontend.bindIP,
		}},
		string(primitives.HistoryService):  internal(ports.history),
		string(primitives.MatchingService): internal(ports.matching),
		string(primitives.WorkerService):   internal(ports.worker),
	}

	c.Archival.History.State = "disabled"
	c.Archival.Visibility.State = "disabled"
	c.NamespaceDefaults.Archival.History.State = "disabled"
	c.NamespaceDefaults.Archival.Visibility.State = "disabled"

	// The internal worker service (scheduler, batcher...) dials the frontend
	// through this address.
	c.PublicClient.HostPort = frontendAddr
	return &c
}

// staticHosts pins every service to its loopback address. Without it the
// server would run ringpop gossip on four more ports and wait for the ring to
// settle, which is slower and makes parallel stacks in tests collide.
func staticHosts(ports servicePorts) map[primitives.ServiceName]static.Hosts {
	addr := func(port int) string { return net.JoinHostPort(loopback, strconv.Itoa(port)) }
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(ports.frontend.dialAddr()),
		primitives.HistoryService:  static.SingleLocalHost(addr(ports.history)),
		primitives.MatchingService: static.SingleLocalHost(addr(ports.matching)),
		primitives.WorkerService:   static.SingleLocalHost(addr(ports.worker)),
	}
}

// pickServicePorts claims the frontend address and three free loopback ports.
func pickServicePorts(h *portHolder, frontendAddr string) (servicePorts, error) {
	var p servicePorts
	var err error
	if p.frontend, err = h.claim("frontend", frontendAddr); err != nil {
		return p, err
	}
	for _, port := range []*int{&p.history, &p.matching, &p.worker} {
		if *port, err = h.free(loopback); err != nil {
			return p, fmt.Errorf("pick internal service port: %w", err)
		}
	}
	return p, nil
}

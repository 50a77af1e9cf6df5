package prodlike

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// Postgres is a PostgreSQL cluster of the stack's own: its data directory and port, so
// restarting it disturbs nothing else (the suite's shared server keeps running).
type Postgres struct {
	Port int
	bin  string // directory of initdb, pg_ctl
	dir  string // the cluster's data directory
	log  string
	cred *syscall.Credential // the postgres user when the test runs as root (initdb refuses root)
	env  []string
}

// PostgresBinDir finds the server binaries (Debian: /usr/lib/postgresql/<major>/bin,
// highest major first; else the directory of pg_ctl on PATH).
func PostgresBinDir() (string, error) {
	if d := os.Getenv("REVOPS_PRODLIKE_PG_BIN"); d != "" {
		return d, nil
	}
	majors, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(majors, func(i, j int) bool {
		return pgMajor(majors[i]) > pgMajor(majors[j])
	})
	if len(majors) > 0 {
		return filepath.Dir(majors[0]), nil
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl): install them (Debian: apt-get install postgresql) or set REVOPS_PRODLIKE_PG_BIN")
}

func pgMajor(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// newPostgres creates a cluster under dir (which the postgres user must own when the
// test runs as root) listening on 127.0.0.1:port only, and starts it.
func newPostgres(binDir, dir string, port int, durable bool) (*Postgres, error) {
	pg := &Postgres{Port: port, bin: binDir, dir: filepath.Join(dir, "pgdata"), log: filepath.Join(dir, "postgres.log")}
	pg.env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "LC_ALL=C", "HOME=" + dir}
	cred, err := postgresUser()
	if err != nil {
		return nil, err
	}
	if cred != nil {
		pg.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	if _, err := run(pg.env, pg.cred, dir, filepath.Join(binDir, "initdb"),
		"-D", pg.dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, err
	}
	// Loopback only, the socket in the cluster's own directory (the system's socket
	// directory belongs to the system cluster). fsync off: a process crash or an
	// immediate stop loses nothing the kernel has (that is all the test does); only a
	// power loss would. It spares the shared 2-core machine's disk. durable: PostgreSQL's
	// defaults (on), as a deployment runs.
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 300\n",
		port, dir)
	if !durable {
		conf += "fsync = off\nfull_page_writes = off\n"
	}
	// pg_stat_statements, when the server has it, for the measurement's "where the time
	// goes" (docs/benchmarks.md); loading it costs nothing until it is created.
	if _, err := os.Stat(filepath.Join(binDir, "..", "lib", "pg_stat_statements.so")); err == nil {
		conf += "shared_preload_libraries = 'pg_stat_statements'\n"
	}
	f, err := os.OpenFile(filepath.Join(pg.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return pg, pg.Start()
}

// postgresUser is who runs the cluster: the postgres user when the test runs as root
// (initdb refuses root), else nil (the test's own user).
func postgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, initdb needs the postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// URL is the connection URL of database db.
func (pg *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.Port, db)
}

// Start starts the cluster and waits until it accepts connections.
func (pg *Postgres) Start() error {
	_, err := run(pg.env, pg.cred, filepath.Dir(pg.dir), filepath.Join(pg.bin, "pg_ctl"),
		"-D", pg.dir, "-l", pg.log, "-w", "-t", "60", "start")
	return err
}

// Stop stops the cluster: mode "immediate" is a crash (recovery at next start), "fast"
// a clean shutdown.
func (pg *Postgres) Stop(mode string) error {
	_, err := run(pg.env, pg.cred, filepath.Dir(pg.dir), filepath.Join(pg.bin, "pg_ctl"),
		"-D", pg.dir, "-m", mode, "-w", "-t", "60", "stop")
	return err
}

// CreateDatabase creates database name.
func (pg *Postgres) CreateDatabase(name string) error {
	_, err := run(pg.env, pg.cred, filepath.Dir(pg.dir), filepath.Join(pg.bin, "createdb"),
		"-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", "postgres", name)
	return err
}

// Log is the end of the server's log.
func (pg *Postgres) Log(lines int) string { return tailFile(pg.log, lines) }

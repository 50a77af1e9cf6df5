# Sourced by scripts/test: makes sure a local PostgreSQL answers on 127.0.0.1 with the
# password "postgres" for the postgres user. Uses the system cluster (initdb refuses root).
ensure_postgres() {
  if pg_isready -q -h 127.0.0.1 -p "${PGPORT:-5432}" 2>/dev/null; then
    set_password
    return
  fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "==> installing PostgreSQL (apt-get)"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
  fi
  local ver
  ver=$(pg_lsclusters -h 2>/dev/null | awk 'NR==1{print $1}')
  if [ -z "$ver" ]; then
    ver=$(ls /usr/lib/postgresql | sort -n | tail -1)
    ${SUDO:-} pg_createcluster "$ver" main >/dev/null
  fi
  echo "==> starting PostgreSQL $ver"
  ${SUDO:-} pg_ctlcluster "$ver" main start || true
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p "${PGPORT:-5432}" && break
    sleep 1
  done
  pg_isready -h 127.0.0.1 -p "${PGPORT:-5432}" || { echo "PostgreSQL did not start" >&2; exit 1; }
  set_password
}

# ensure_postgres_binaries installs PostgreSQL's server binaries (initdb, pg_ctl) when
# missing, even when REVOPS_TEST_DATABASE_URL points elsewhere: the production-shape test
# (internal/testkit/prodlike) runs a cluster of its own.
ensure_postgres_binaries() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
    return
  fi
  echo "==> installing PostgreSQL server binaries for the production-shape test (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
}

# as_postgres runs psql as the postgres superuser over the local socket.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    su postgres -c "psql -qtAc \"$1\""
  else
    sudo -u postgres psql -qtAc "$1"
  fi
}

set_password() {
  as_postgres "ALTER USER postgres PASSWORD 'postgres'" >/dev/null
  raise_connections
}

# raise_connections lifts the stock limit of 100 connections: the suite runs two test
# binaries at once, each with parallel tests that open their own pools, and ran out of
# connections ("too many clients already"). It takes a restart, once per cluster.
raise_connections() {
  local max ver
  max=$(as_postgres "SHOW max_connections")
  if [ "${max:-0}" -ge 500 ]; then
    return
  fi
  echo "==> raising PostgreSQL max_connections from $max to 500 (restart)"
  as_postgres "ALTER SYSTEM SET max_connections = 500" >/dev/null
  ver=$(pg_lsclusters -h 2>/dev/null | awk '$2=="main"{print $1; exit}')
  ${SUDO:-} pg_ctlcluster "$ver" main restart
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p "${PGPORT:-5432}" && return
    sleep 1
  done
  echo "PostgreSQL did not come back after the restart" >&2
  exit 1
}

# ensure_chromium installs Debian's chromium for the dashboard's browser tests when missing.
# ensure_client_packages installs the client libraries' tools when Node is there: the
# TypeScript client's npm packages and the Python client's type checker (pyright), exactly
# as their lockfiles pin them (npm ci); and Python 3.9+ with venv for the Python client's
# suite. The client tests fail without them.
ensure_client_packages() {
  if ! command -v npm >/dev/null; then
    echo "==> installing Node.js and npm for the client libraries (apt-get)"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
  fi
  # The client needs Node 20.3+ (AbortSignal.any); a distribution's older Node is refused
  # here, clearly, rather than failing the suite later.
  if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=3)?0:1)'; then
    echo "scripts/test: the TypeScript client needs Node.js 20.3 or later; found $(node --version)" >&2
    exit 1
  fi
  local dir
  for dir in clients/typescript clients/python; do
    [ -f "$dir/package-lock.json" ] || continue
    if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
      echo "==> npm ci in $dir"
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
  done
  ensure_python
}

# ensure_python makes sure python3 is 3.9 or later and can make a venv with pip in it
# (Debian ships venv's ensurepip apart, in python3-venv): the Python client's suite runs
# in a new venv, as its README tells users.
ensure_python() {
  local check='import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 9) else 1)'
  if command -v python3 >/dev/null && python3 -c "$check" 2>/dev/null; then
    return
  fi
  echo "==> installing Python 3 with venv for the Python client (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
  python3 -c "$check" || { echo "scripts/test: the Python client needs Python 3.9 or later with venv" >&2; exit 1; }
}

ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then
    return
  fi
  echo "==> installing chromium for the browser tests (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
}

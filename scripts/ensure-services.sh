#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on 127.0.0.1; on a fresh Debian machine install and start them.
set -euo pipefail

PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
REDIS_PORT=${REDIS_PORT:-6379}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

pg_up() { pg_isready -q -h "$PGHOST" -p "$PGPORT" 2>/dev/null || python3 - "$PGHOST" "$PGPORT" <<'PY'
import socket, sys
s = socket.socket(); s.settimeout(1)
sys.exit(0 if s.connect_ex((sys.argv[1], int(sys.argv[2]))) == 0 else 1)
PY
}
redis_up() { python3 - "$REDIS_PORT" <<'PY'
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
    s.sendall(b"PING\r\n"); sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)
except OSError:
    sys.exit(1)
PY
}

apt_updated=""
apt_install() {
  [ -n "$apt_updated" ] || { $SUDO apt-get update -qq; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

if ! pg_up; then
  echo "PostgreSQL is not answering on $PGHOST:$PGPORT; installing/starting it" >&2
  command -v pg_ctlcluster >/dev/null || apt_install postgresql
  version=$(ls /etc/postgresql | sort -V | tail -n1)
  conf=/etc/postgresql/$version/main
  # trust auth on loopback, as the tests expect (postgres user, no password)
  $SUDO sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/; s/^(local\s+all\s+postgres\s+)\S+/\1trust/' "$conf/pg_hba.conf"
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || $SUDO pg_ctlcluster "$version" main start
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  pg_up || { echo "PostgreSQL did not start" >&2; exit 1; }
fi
psql -h "$PGHOST" -p "$PGPORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 \
  || psql -h "$PGHOST" -p "$PGPORT" -U postgres -c "CREATE DATABASE test" >/dev/null

if ! redis_up; then
  echo "Redis is not answering on 127.0.0.1:$REDIS_PORT; installing/starting it" >&2
  command -v redis-server >/dev/null || apt_install redis-server
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir /tmp --logfile /tmp/redis-discours.log
  for _ in $(seq 1 30); do redis_up && break; sleep 0.5; done
  redis_up || { echo "Redis did not start" >&2; exit 1; }
fi
# The GraphiQL test drives Debian's Chromium (tests/http/test_graphiql_browser.py).
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "Chromium is not installed; installing Debian's chromium for the browser test" >&2
  apt_install chromium
fi
# The failover, pooling and restart drills start their own PgBouncer, HAProxy (tests/drills/test_pgbouncer.py) and their own
# PostgreSQL primary and replica from the installed server's initdb and pg_basebackup (devtools/postgres.py).
if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
  echo "PgBouncer is not installed; installing Debian's pgbouncer for the pooling test" >&2
  apt_install pgbouncer
  # the package starts a system instance; the tests start their own
  { $SUDO systemctl disable --now pgbouncer || $SUDO service pgbouncer stop; } >/dev/null 2>&1 || true
fi
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  echo "HAProxy is not installed; installing Debian's haproxy for the rolling-restart test" >&2
  apt_install haproxy
  { $SUDO systemctl disable --now haproxy || $SUDO service haproxy stop; } >/dev/null 2>&1 || true
fi
echo "services: PostgreSQL $PGHOST:$PGPORT and Redis 127.0.0.1:$REDIS_PORT are up; $($CHROMIUM --version 2>/dev/null)" >&2

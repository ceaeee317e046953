#!/usr/bin/env bash
# Starts (start DIR) or stops (stop DIR) the PostgreSQL 15 server that the store's tests share
# in one ctest run: a cluster in DIR, a Unix socket in DIR only (listen_addresses = ''), run as
# nobody when ctest runs as root (initdb refuses root). ctest runs `stop` after the tests, also
# when they fail. Without the server's programs it does nothing: each test then starts its own
# or skips, saying why (postgres_server.h).
set -euo pipefail
action=$1 dir=$2
bin=${TRIAGE_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] || { echo "no PostgreSQL in $bin: nothing to $action"; exit 0; }
as_server=()
[ "$(id -u)" -eq 0 ] && as_server=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
stop() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
case $action in
  start)
    stop  # a server a killed run left behind
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown 65534:65534 "$dir"
    chmod 0700 "$dir"
    cd "$dir"
    "${as_server[@]}" "$bin/initdb" -D "$dir/data" -U triage -A trust -E UTF8 --locale=C --no-sync \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; exit 1; }
    "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -c listen_addresses= -c fsync=off -c synchronous_commit=off -c max_connections=200 -c shared_buffers=32MB" \
      start >/dev/null || { cat "$dir/server.log"; exit 1; }
    echo "PostgreSQL for the store's tests: socket in $dir"
    ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

# pg.sh - a throwaway PostgreSQL server for tests. Source it, then:
#
#   pg_start            # temp cluster on 127.0.0.1, database "sqlkube"; exports
#                       # SK_PG_URL, SK_PG_PORT, SK_PG_DIR
#   pg_create_db NAME   # creates another database, prints its URL
#   pg_stop             # stops the server and removes SK_PG_DIR
#   pg_halt, pg_resume  # stop the server, keeping the cluster; start it again
#
# Meant for CI: it works as root (PostgreSQL refuses root, so the server then
# runs as the `postgres` user, which must be able to reach $TMPDIR, /tmp by
# default), never reads stdin, and pg_stop is idempotent so it can sit in an
# EXIT trap (`trap pg_stop EXIT`). The cluster is fsync=on so
# durability behaves as in production. Ports are picked at random and the
# start is retried, because checking a port and binding it later races with
# every other test run on the machine.

PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

# Runs a server-side binary as the cluster owner.
_pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Succeeds if something accepts connections on 127.0.0.1:$1.
_pg_port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pg_start() {
    local dir port tries
    unset SK_PG_PORT
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sk-pg.XXXXXX") || return 1
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir" || { rm -rf "$dir"; return 1; }
    fi
    SK_PG_DIR=$dir
    export SK_PG_DIR
    if ! _pg_as_owner "$PG_BINDIR/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 </dev/null; then
        echo "pg_start: initdb failed:" >&2
        cat "$dir/initdb.log" >&2
        pg_stop
        return 1
    fi
    for tries in 1 2 3 4 5 6 7 8 9 10; do
        [ "$tries" -gt 1 ] && sleep 0.2
        port=$((20000 + RANDOM % 40000))
        _pg_port_busy "$port" && continue
        if _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-p $port -c listen_addresses=127.0.0.1 -c fsync=on -k $dir" \
            start >/dev/null 2>&1 </dev/null; then
            SK_PG_PORT=$port
            export SK_PG_PORT
            break
        fi
    done
    if [ -z "${SK_PG_PORT:-}" ]; then
        echo "pg_start: server did not start:" >&2
        tail -n 20 "$dir/server.log" >&2 || true
        pg_stop
        return 1
    fi
    SK_PG_URL=$(pg_create_db sqlkube) || { pg_stop; return 1; }
    export SK_PG_URL
}

pg_create_db() {
    "$PG_BINDIR/createdb" -h 127.0.0.1 -p "$SK_PG_PORT" -U postgres "$1" </dev/null || return 1
    echo "postgres://postgres@127.0.0.1:$SK_PG_PORT/$1"
}

pg_stop() {
    if [ -n "${SK_PG_DIR:-}" ] && [ -d "$SK_PG_DIR" ]; then
        if [ -f "$SK_PG_DIR/data/postmaster.pid" ]; then
            _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$SK_PG_DIR/data" -m fast -w -t 60 stop \
                >/dev/null 2>&1 </dev/null
        fi
        rm -rf "$SK_PG_DIR"
    fi
    unset SK_PG_DIR SK_PG_PORT SK_PG_URL
}

# Stops the server of pg_start but keeps its cluster, for a test of a
# database that goes away; pg_resume starts it again on the same port.
pg_halt() {
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$SK_PG_DIR/data" -m fast -w -t 60 stop \
        >/dev/null 2>&1 </dev/null
}

pg_resume() {
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$SK_PG_DIR/data" -l "$SK_PG_DIR/server.log" -w -t 60 \
        -o "-p $SK_PG_PORT -c listen_addresses=127.0.0.1 -c fsync=on -k $SK_PG_DIR" \
        start >/dev/null 2>&1 </dev/null
}

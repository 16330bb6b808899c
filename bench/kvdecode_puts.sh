#!/usr/bin/env bash
# What the etcd keyspace's SQL decoder (ctl/kvdecode.c, issue 38 item 1)
# costs puts: two builds side by side, one without the follower (BEFORE) and
# one with it (AFTER), each on SQLite and on PostgreSQL, 3 interleaved rounds
# of bench/etcdload puts (32 clients, 8 connections, 8 s), then whether the
# docs kept up (rows of sk_kv against sk_kv_doc). Each run also prints the
# server's CPU per put by thread (µs): the decoder runs on sk-ticker.
#   BEFORE=/path/to/old/sqlkube AFTER=build/sqlkube bench/kvdecode_puts.sh
# Run from a scratch directory: it makes data dirs there.
set -e
source "$(dirname "$0")/../tests/support/pg.sh"; pg_start >/dev/null
EL=${ETCDLOAD:-$(dirname "$0")/../build/etcdload}
start() { # bin name db port
  mkdir -p $2; ($1 serve --listen 127.0.0.1:$(( $4 + 1000 )) --data-dir $2 --plain-http --etcd-listen 127.0.0.1:$4 $3 > $2.log 2>&1 &); }
psql -XAq "$SK_PG_URL" -c "CREATE DATABASE before_db" -c "CREATE DATABASE after_db"
base=${SK_PG_URL%/*}
start ${BEFORE:?} sb "" 24001
start ${AFTER:-build/sqlkube} sa "" 24002
start ${BEFORE:?} pb "--db $base/before_db" 24003
start ${AFTER:-build/sqlkube} pa "--db $base/after_db" 24004
sleep 6
# CPU ticks of each thread name of the server listening on port $1
threads() {
  local pid=$(ss -ltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(awk '{print $14+$15}' $t/stat)"; done |
    awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort
}
for r in 1 2 3; do
  for t in "24001 sqlite-before" "24002 sqlite-after" "24003 pg-before" "24004 pg-after"; do
    set -- $t
    threads $1 > threads.0
    out=$($EL -endpoint 127.0.0.1:$1 -mode put -clients 32 -conns 8 -seconds 8)
    threads $1 > threads.1
    echo "$r $2 $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["puts_per_s"]), d["p99_ms"], d["ok"])' |
      { read rate p99 ok; echo "$rate $p99 $(join threads.0 threads.1 | awk -v ok=$ok '$3 > $2 {printf "%s=%.1f ", $1, ($3 - $2) * 1e4 / ok}')"; })"
  done
done
psql -XAt "$base/after_db" -c "select count(*) from sk_kv" -c "select count(*) from sk_kv_doc"
sqlite3 sa/sqlkube.db "select count(*) from sk_kv; select count(*) from sk_kv_doc"
pkill -f "serve --listen 127.0.0.1:2500[1-4]" || true
sleep 1; pg_stop >/dev/null

#!/usr/bin/env bash
# bench/issue39.sh - issue 39's side-by-side tables against etcd 3.4 in one
# run, on SQLite and PostgreSQL: REST creates over HTTPS and etcd-face puts
# (etcd_side_by_side.py), churn through both faces with a second
# PostgreSQL instance (churn.py --rest), and lists at scale, dartboard's
# sizes: 1k to 256k ConfigMaps of 10 KiB, paged and unpaged, REST (cache
# and exact revision) and etcd face (paged_lists.py). Each script prints
# its own markdown tables; this runs them in turn, with one PostgreSQL
# cluster (tests/support/pg.sh) for all of them, stopped at the end.
#
# usage: bench/issue39.sh [--quick]
#   --quick: short rounds and small sizes, to check the run works (the
#            figures then mean little); the default takes about 45 minutes
#            (the lists about 21 of them).
# Needs `make build` (build/sqlkube, build/writebench) and etcd 3.4 on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/support/pg.sh

quick=0
[ "${1:-}" = "--quick" ] && quick=1
if [ "$quick" = 1 ]; then
    put=(--seconds 2 --rounds 1 --clients 32)
    churn=(--seconds 5 --watchers 100 --rest-watchers 20)
    lists=(--sizes 1000,3000 --size 10240 --reps 1)
else
    put=(--seconds 8 --rounds 3 --clients 32)
    churn=(--seconds 30)
    lists=(--sizes 1000,10000,100000,262144 --size 10240 --reps 2)
fi

pg_start
trap pg_stop EXIT

echo "# Issue 39 side by side, $(date -u +%Y-%m-%dT%H:%MZ), main at $(git rev-parse --short HEAD)"
echo
echo "## REST creates over HTTPS and etcd-face puts (32 clients, 1 KiB)"
python3 bench/etcd_side_by_side.py --bin build/sqlkube --pg-url "$SK_PG_URL" \
    --writebench build/writebench --sections put "${put[@]}"
echo
echo "## Churn: writers and watchers through the etcd face and the REST face"
python3 bench/churn.py --bin build/sqlkube --pg-url "$SK_PG_URL" --rest "${churn[@]}"
echo
echo "## Lists at scale (10 KiB ConfigMaps, paged by 500 and unpaged) against etcd's Range"
python3 bench/paged_lists.py --bin build/sqlkube --writebench build/writebench \
    --pg-url "$SK_PG_URL" "${lists[@]}"

/*
 * import.h - `sqlkube import`: moves an etcd keyspace, with its revisions,
 * into an empty store (store.h, sk_store_kv_import), from a file `etcdctl
 * snapshot save` wrote (or a member's db file), read by core/etcdsnap, or
 * from a live etcd (etcd/client.h), whose later writes it then follows.
 */
#ifndef SK_CMD_IMPORT_H
#define SK_CMD_IMPORT_H

#include "etcd/client.h"

/* Runs the import of the snapshot at path into the store at db; prints
 * what it did on stdout, progress on stderr when that is a terminal, and
 * any failure as one line on stderr. The process's exit status. */
int sk_cmd_import_snapshot(const char *db, const char *path);

/* `--from-etcd ENDPOINTS`: imports the live etcd's own snapshot as above,
 * then follows its watch, committing each later revision as it was, until
 * caught up (until_synced) or SIGINT/SIGTERM; then copies its leases. The
 * process's exit status. */
int sk_cmd_import_from_etcd(const char *db, const char *endpoints, const sk_etcd_client_tls *tls,
                            int until_synced);

#endif

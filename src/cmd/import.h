/*
 * import.h - `sqlkube import --etcd-snapshot FILE`: moves an etcd
 * keyspace, with its revisions, into an empty store (store.h,
 * sk_store_kv_import), from a file `etcdctl snapshot save` wrote (or a
 * member's db file), read by core/etcdsnap.
 */
#ifndef SK_CMD_IMPORT_H
#define SK_CMD_IMPORT_H

/* Runs the import of the snapshot at path into the store at db; prints
 * what it did on stdout, progress on stderr when that is a terminal, and
 * any failure as one line on stderr. The process's exit status. */
int sk_cmd_import_snapshot(const char *db, const char *path);

#endif

/*
 * walbatch.h - a SQLite VFS shim that writes a commit's WAL frames with one
 * write call instead of two per frame.
 *
 * SQLite appends each frame of a commit to the -wal file as two pwrite
 * calls (its 24-byte header, then the page), so a group commit of about 15
 * creates made about 100 calls, and those calls were the largest single
 * share of the writer thread's time (bench/README.md, "WAL frames in one
 * write"). This shim keeps the appends to a WAL file in a buffer and
 * writes them with one call before anything can depend on them: as soon as
 * the commit's last frame (the one whose header carries the database size)
 * is appended, and before a sync, read, truncate, size query, close, or a
 * write that does not append. Every other file, and every other call, goes
 * straight to SQLite's default VFS.
 *
 * SQLite publishes a commit's frames to other connections (the wal-index
 * header) right after appending them, syncing first only with
 * synchronous=FULL. Writing at the last frame, not at the sync, keeps every
 * frame in the file before any reader can look for it whatever the
 * synchronous setting of the connection: the store's writer commits with
 * FULL, the etcd keyspace decoder's docs with NORMAL (sqlite.c).
 */
#ifndef SK_STORE_WALBATCH_H
#define SK_STORE_WALBATCH_H

/* Registers the shim over the default VFS (once; any thread) and returns
 * its name for sqlite3_open_v2. */
const char *sk_walbatch_vfs(void);

#endif

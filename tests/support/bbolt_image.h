/*
 * bbolt_image.h - builds small bbolt files in memory as etcd lays them out
 * (core/bbolt.c and core/etcdsnap.c describe the format), for the unit test
 * and the fuzz target of the snapshot reader: 512-byte pages; pages 0 and 1
 * the meta pages (checksums computed), 2 a freelist, 3 the root leaf with
 * buckets "key" (its own leaf page 4, or a branch page 4 over leaves 5 and
 * 6 when asked), "lease" and "meta" (inline buckets).
 */
#ifndef SK_TEST_BBOLT_IMAGE_H
#define SK_TEST_BBOLT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define BI_PAGE 512

typedef struct bi_row {
    int64_t rev, sub;
    int tombstone;
    const char *key, *value;
    int64_t create_rev, mod_rev, version, lease;
} bi_row;

typedef struct bi_spec {
    const bi_row *rows;
    int n_rows;
    int split; /* > 0: the key bucket is a branch over two leaves, split before rows[split] */
    const int64_t *lease_ids, *lease_ttls;
    int n_leases;
    int64_t compact_rev; /* 0: no compaction keys in "meta" */
    int64_t compact_finished; /* 0: compact_rev (a finished compaction) */
} bi_spec;

/* A new buffer (free) of *len bytes: the file spec describes. */
unsigned char *bi_build(const bi_spec *spec, size_t *len);
/* Recomputes the checksum of the meta page at offset off (after edits). */
void bi_fix_meta(unsigned char *file, size_t off);
/* The protobuf of an mvccpb.KeyValue into out (at least 64 + key and value
 * bytes); returns its length. */
size_t bi_kv_proto(const bi_row *r, unsigned char *out);

#endif

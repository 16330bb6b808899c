/*
 * crc32c.h - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum etcd's HashKV computes over its keyspace (Go's
 * crc32.MakeTable(crc32.Castagnoli)), so that a hash sqlkube answers can be
 * compared with a real etcd's.
 */
#ifndef SK_CORE_CRC32C_H
#define SK_CORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc continued over the len bytes at p; start with 0, as Go's hash does. */
uint32_t sk_crc32c(uint32_t crc, const void *p, size_t len);

#endif

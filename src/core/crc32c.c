/*
 * crc32c.c - see crc32c.h. A byte-at-a-time table, built once: HashKV runs
 * rarely (an operator's check), so the simplest correct form is enough.
 */
#include "core/crc32c.h"

#include <pthread.h>

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
}

uint32_t sk_crc32c(uint32_t crc, const void *p, size_t len)
{
    pthread_once(&table_once, build_table);
    const unsigned char *b = p;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/*
 * svcrange.h - the ranges Services draw from, as kube-apiserver's
 * --service-cluster-ip-range (an IPv4 CIDR) and --service-node-port-range
 * ("30000-32767"): parsing, membership, canonical text, and the choice of
 * a candidate at random. Pure arithmetic; the caller brings the randomness
 * and the store decides who owns what (api/alloc.c).
 *
 * A range is `size` consecutive values from `base` (IPv4 addresses as 32-bit
 * numbers, or port numbers); values are addressed by their offset from base.
 * As in kube's ipallocator/portallocator, a CIDR's network and broadcast
 * addresses are not usable (offset 0 is the network address + 1, which the
 * `kubernetes` Service takes), and the lowest `static_band` offsets are kept
 * for values clients ask for: random picks come from above the band, which
 * is used only once everything above it is taken.
 */
#ifndef SK_KUBE_SVCRANGE_H
#define SK_KUBE_SVCRANGE_H

#include "core/err.h"

#include <stdint.h>

/* kube-apiserver's defaults. */
#define SK_SERVICE_CIDR_DEFAULT "10.96.0.0/12"
#define SK_NODE_PORTS_DEFAULT "30000-32767"

/* The claim kinds (store.h sk_claim) Services' values are recorded under. */
#define SK_SVCRANGE_CLAIM_IP "clusterip"
#define SK_SVCRANGE_CLAIM_PORT "nodeport"

/* Enough for "255.255.255.255/32" and for any port text. */
#define SK_SVCRANGE_TEXT_MAX 20

typedef struct sk_svcrange {
    int is_ip;
    uint32_t base;                   /* first usable value */
    uint32_t size;                   /* number of usable values (> 0) */
    uint32_t static_band;            /* offsets below this are left to explicit requests */
    char spec[SK_SVCRANGE_TEXT_MAX]; /* canonical text: "10.96.0.0/12", "30000-32767" */
} sk_svcrange;

/* "a.b.c.d/n", IPv4, 12 <= n <= 30 (kube refuses larger ranges for IPv4).
 * SK_ERR_INVALID if malformed. The address may have host bits set; the range
 * is its network. */
sk_err sk_svcrange_parse_cidr(const char *text, sk_svcrange *out);
/* "lo-hi" (1 <= lo <= hi <= 65535) or a single port. SK_ERR_INVALID if
 * malformed. */
sk_err sk_svcrange_parse_ports(const char *text, sk_svcrange *out);

/* The value text (dotted IPv4 or decimal port) as a number: 0 on success,
 * -1 if malformed. */
int sk_svcrange_value(const sk_svcrange *r, const char *text, uint32_t *value_out);
/* 1 and *offset_out if value is a usable value of r, else 0. */
int sk_svcrange_contains(const sk_svcrange *r, uint32_t value, uint32_t *offset_out);
/* The canonical text of a value (dotted quad, or decimal). */
void sk_svcrange_format(const sk_svcrange *r, uint32_t value, char out[SK_SVCRANGE_TEXT_MAX]);

/* A candidate value for a random pick: from above the static band (from the
 * whole range if the band leaves nothing above it). */
uint32_t sk_svcrange_pick(const sk_svcrange *r, uint64_t random);

/*
 * The free value kube's bitmap allocator would hand out, given which are
 * used (bit i of used: offset i, r->size bits): the first free one scanning
 * up from a random offset above the static band (wrapping within it), else
 * likewise within the band. 0 and *value_out, or -1 if every value is used.
 */
int sk_svcrange_scan(const sk_svcrange *r, const unsigned char *used, uint64_t random,
                     uint32_t *value_out);

#endif

/*
 * table.h - meta.k8s.io/v1 Table output (`Accept: ...;as=Table`), what
 * `kubectl get` prints: Name, the kind's own columns, Age.
 *
 * A list is rendered as it streams: sk_table_begin, then one sk_table_row
 * per item (comma-separated by the caller), then the caller closes the rows
 * and adds the list metadata.
 */
#ifndef SK_KUBE_TABLE_H
#define SK_KUBE_TABLE_H

#include "core/buf.h"
#include "kube/options.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

/* `{"kind":"Table",...,"columnDefinitions":[...],"rows":[` for r. */
void sk_table_begin(sk_buf *b, const sk_resource *r);
/* One row for obj (borrowed), with the object as include asks; ages are
 * relative to now_s. */
void sk_table_row(sk_buf *b, const sk_resource *r, json_t *obj, sk_include_object include,
                  int64_t now_s);
/* A whole Table of one object, as read at revision rev. */
void sk_table_single(sk_buf *b, const sk_resource *r, json_t *obj, sk_include_object include,
                     int64_t rev, int64_t now_s);

#endif

/*
 * table.h - meta.k8s.io/v1 Table output (`Accept: ...;as=Table`), what
 * `kubectl get` prints: kube-apiserver's printer columns for the common
 * kinds (pods, deployments, services, nodes, jobs, ...; wide columns have
 * priority 1) and its default table (Name, Created At) for every other kind.
 *
 * Objects come in their stored form (r->stored_as's: core Events for
 * events.k8s.io, autoscaling/v2 for autoscaling/v1 HPAs), as kube computes
 * cells from its internal object whatever version was asked for; the object
 * embedded in a row (includeObject=Object) is converted to r's version.
 *
 * A list is rendered as it streams: sk_table_begin with the list's
 * metadata, then one sk_table_row per item (comma-separated by the caller),
 * then the caller closes the rows and the Table.
 */
#ifndef SK_KUBE_TABLE_H
#define SK_KUBE_TABLE_H

#include "core/buf.h"
#include "kube/options.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

/* `{"kind":"Table",...,"metadata":<list_meta>,"columnDefinitions":[...],
 * "rows":[` for r, in kube's order; list_meta (borrowed) is the list's
 * metadata as JSON text. */
void sk_table_begin(sk_buf *b, const sk_resource *r, const char *list_meta);
/* One row for stored (borrowed), with the object as include asks; ages are
 * relative to now_s. */
void sk_table_row(sk_buf *b, const sk_resource *r, json_t *stored, sk_include_object include,
                  int64_t now_s);
/*
 * A row in two steps, for callers that keep the first per object version:
 * the template is stored's row (as sk_table_row writes it, up to its cells
 * and conditions, without the object and the closing '}') with each age
 * left as a hole, a function of r's printer and stored alone; the fill
 * writes it with the ages at now_s. Binary: only sk_table_row_fill reads it.
 */
void sk_table_row_template(sk_buf *out, const sk_resource *r, const json_t *stored);
void sk_table_row_fill(sk_buf *b, const char *tmpl, size_t len, int64_t now_s);
/* The `,"object":` member of a row with includeObject=Object: stored
 * converted to r's version. */
void sk_table_row_object(sk_buf *b, const sk_resource *r, const json_t *stored);
/* Whether r's row templates may be kept with the object version: not a
 * custom resource's, whose columns come from its CRD, which may change
 * while the object does not. */
int sk_table_row_kept(const sk_resource *r);
/* The head of a whole Table of one object read at revision rev, up to its
 * rows' '['; the caller writes the row, then "]}". */
void sk_table_single_begin(sk_buf *b, const sk_resource *r, int64_t rev);
/* A whole Table of one object, as read at revision rev. */
void sk_table_single(sk_buf *b, const sk_resource *r, json_t *stored, sk_include_object include,
                     int64_t rev, int64_t now_s);

/* The column definitions of r's Table (new reference). */
json_t *sk_table_columns(const sk_resource *r);
/* The cells of stored's row (new reference), one per column. */
json_t *sk_table_cells(const sk_resource *r, const json_t *stored, int64_t now_s);
/* Kubernetes' human duration ("45s", "3m20s", "5h", "12d", "2y3d") of secs
 * into out (at least 32 bytes). */
void sk_table_human_duration(int64_t secs, char *out, size_t n);

#endif

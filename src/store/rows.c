/*
 * rows.c - see rows.h.
 */
#include "store/rows.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

void sk_row_clear(sk_row *row)
{
    free(row->resource);
    free(row->ns);
    free(row->name);
    free(row->uid);
    free(row->value);
    memset(row, 0, sizeof *row);
}

static char *dup_or_null(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    SK_CHECK_ALLOC(d);
    return d;
}

void sk_row_copy(sk_row *dst, const sk_row *src)
{
    *dst = *src;
    dst->resource = dup_or_null(src->resource);
    dst->ns = dup_or_null(src->ns);
    dst->name = dup_or_null(src->name);
    dst->uid = dup_or_null(src->uid);
    dst->value = NULL;
    if (src->value) {
        dst->value = malloc(src->value_len + 1);
        SK_CHECK_ALLOC(dst->value);
        memcpy(dst->value, src->value, src->value_len);
        dst->value[src->value_len] = '\0';
    }
}

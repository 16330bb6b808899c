/*
 * table.c - see table.h. Columns per kind are a small table here; cells
 * are computed from the object as kubectl's printers compute them.
 */
#include "kube/table.h"
#include "core/check.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_column {
    const char *name, *type, *format, *description;
} table_column;

static void human_age(int64_t secs, char *out, size_t n)
{
    if (secs < 0) {
        snprintf(out, n, "0s");
        return;
    }
    int64_t m = secs / 60, h = secs / 3600, d = h / 24, y = d / 365;
    if (secs < 120)
        snprintf(out, n, "%llds", (long long)secs);
    else if (m < 10 && secs % 60)
        snprintf(out, n, "%lldm%llds", (long long)m, (long long)(secs % 60));
    else if (m < 180)
        snprintf(out, n, "%lldm", (long long)m);
    else if (h < 8 && m % 60)
        snprintf(out, n, "%lldh%lldm", (long long)h, (long long)(m % 60));
    else if (h < 48)
        snprintf(out, n, "%lldh", (long long)h);
    else if (h < 192 && h % 24)
        snprintf(out, n, "%lldd%lldh", (long long)d, (long long)(h % 24));
    else if (d < 730)
        snprintf(out, n, "%lldd", (long long)d);
    else if (y < 8 && d % 365)
        snprintf(out, n, "%lldy%lldd", (long long)y, (long long)(d % 365));
    else
        snprintf(out, n, "%lldy", (long long)y);
}

/* Kind-specific middle columns (between Name and Age), as kubectl shows them. */
static int kind_columns(const sk_resource *r, const table_column **cols)
{
    static const table_column cm[] = {{"Data", "integer", "", "Number of data keys"}};
    static const table_column secret[] = {{"Type", "string", "", "The type of the secret"},
                                          {"Data", "integer", "", "Number of data keys"}};
    static const table_column sa[] = {{"Secrets", "integer", "", "Number of secrets"}};
    static const table_column ns[] = {{"Status", "string", "", "The phase of the namespace"}};
    static const table_column lease[] = {{"Holder", "string", "", "The holder of the lease"}};
    static const table_column ev[] = {{"Type", "string", "", "Event type"},
                                      {"Reason", "string", "", "Event reason"},
                                      {"Object", "string", "", "The involved object"},
                                      {"Message", "string", "", "Event message"}};
    struct {
        const char *kind;
        const table_column *cols;
        int n;
    } table[] = {{"ConfigMap", cm, 1}, {"Secret", secret, 2}, {"ServiceAccount", sa, 1},
                 {"Namespace", ns, 1}, {"Lease", lease, 1},   {"Event", ev, 4}};
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (strcmp(table[i].kind, r->kind) == 0) {
            *cols = table[i].cols;
            return table[i].n;
        }
    }
    *cols = NULL;
    return 0;
}

static json_t *kind_cells(const sk_resource *r, json_t *obj)
{
    json_t *cells = json_array();
    const char *k = r->kind;
    if (strcmp(k, "ConfigMap") == 0 || strcmp(k, "Secret") == 0) {
        if (strcmp(k, "Secret") == 0) {
            const char *t = json_string_value(json_object_get(obj, "type"));
            json_array_append_new(cells, json_string(t ? t : ""));
        }
        size_t n = json_object_size(json_object_get(obj, "data")) +
                   json_object_size(json_object_get(obj, "binaryData"));
        json_array_append_new(cells, json_integer((json_int_t)n));
    } else if (strcmp(k, "ServiceAccount") == 0) {
        json_array_append_new(
            cells, json_integer((json_int_t)json_array_size(json_object_get(obj, "secrets"))));
    } else if (strcmp(k, "Namespace") == 0) {
        const char *p = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
        json_array_append_new(cells, json_string(p ? p : ""));
    } else if (strcmp(k, "Lease") == 0) {
        const char *h =
            json_string_value(json_object_get(json_object_get(obj, "spec"), "holderIdentity"));
        json_array_append_new(cells, json_string(h ? h : ""));
    } else if (strcmp(k, "Event") == 0) {
        json_t *io = json_object_get(obj, "involvedObject");
        const char *t = json_string_value(json_object_get(obj, "type"));
        const char *reason = json_string_value(json_object_get(obj, "reason"));
        const char *ik = json_string_value(json_object_get(io, "kind"));
        const char *in = json_string_value(json_object_get(io, "name"));
        const char *m = json_string_value(json_object_get(obj, "message"));
        char object[512];
        snprintf(object, sizeof object, "%s/%s", ik ? ik : "", in ? in : "");
        for (char *p = object; *p && *p != '/'; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        json_array_append_new(cells, json_string(t ? t : ""));
        json_array_append_new(cells, json_string(reason ? reason : ""));
        json_array_append_new(cells, json_string(object));
        json_array_append_new(cells, json_string(m ? m : ""));
    }
    return cells;
}

void sk_table_begin(sk_buf *b, const sk_resource *r)
{
    json_t *defs = json_array();
    json_array_append_new(defs,
                          json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Name", "type", "string",
                                    "format", "name", "description",
                                    "Name must be unique within a namespace.", "priority", 0));
    const table_column *cols;
    int n = kind_columns(r, &cols);
    for (int i = 0; i < n; i++)
        json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", cols[i].name,
                                              "type", cols[i].type, "format", cols[i].format,
                                              "description", cols[i].description, "priority", 0));
    json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Age", "type",
                                          "string", "format", "", "description",
                                          "CreationTimestamp is a timestamp representing the "
                                          "server time when this object was created.",
                                          "priority", 0));
    char *text = json_dumps(defs, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_printf(b,
                  "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"columnDefinitions\":%s,"
                  "\"rows\":[",
                  text);
    free(text);
    json_decref(defs);
}

void sk_table_row(sk_buf *b, const sk_resource *r, json_t *obj, sk_include_object include,
                  int64_t now_s)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *created = json_string_value(json_object_get(meta, "creationTimestamp"));
    char age[32] = "<unknown>";
    if (created) {
        int64_t t = sk_parse_rfc3339(created);
        if (t >= 0)
            human_age(now_s - t, age, sizeof age);
    }
    json_t *cells = json_array();
    json_array_append_new(cells, json_string(name ? name : ""));
    json_array_extend(cells, kind_cells(r, obj));
    json_array_append_new(cells, json_string(age));
    json_t *row = json_pack("{s:o}", "cells", cells);
    if (include == SK_INCLUDE_OBJECT) {
        json_object_set(row, "object", obj);
    } else if (include == SK_INCLUDE_METADATA) {
        json_object_set_new(row, "object",
                            json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata",
                                      "apiVersion", "meta.k8s.io/v1", "metadata", meta));
    }
    char *text = json_dumps(row, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    sk_buf_puts(b, text);
    free(text);
    json_decref(row);
}

void sk_table_single(sk_buf *b, const sk_resource *r, json_t *obj, sk_include_object include,
                     int64_t rev, int64_t now_s)
{
    sk_table_begin(b, r);
    sk_table_row(b, r, obj, include, now_s);
    sk_buf_printf(b, "],\"metadata\":{\"resourceVersion\":\"%lld\"}}", (long long)rev);
}

/*
 * scale.c - see scale.h.
 */
#include "kube/scale.h"
#include "core/check.h"
#include "core/buf.h"

#include <stdlib.h>
#include <string.h>

typedef struct requirement {
    const char *key;
    char *text; /* new */
} requirement;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const requirement *)a)->key, ((const requirement *)b)->key);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "key in (a,b)" / "key notin (a,b)" with the values sorted. */
static char *set_requirement(const char *key, const char *op, const json_t *values)
{
    size_t n = json_array_size(values);
    const char **v = calloc(n ? n : 1, sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (json_is_string(json_array_get(values, i)))
            v[m++] = json_string_value(json_array_get(values, i));
    qsort(v, m, sizeof *v, by_string);
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "%s %s (", key, op);
    for (size_t i = 0; i < m; i++)
        sk_buf_printf(&b, "%s%s", i ? "," : "", v[i]);
    sk_buf_puts(&b, ")");
    free(v);
    return sk_buf_steal(&b, NULL);
}

char *sk_scale_selector_string(const json_t *selector, int is_map)
{
    const json_t *labels = is_map ? selector : json_object_get(selector, "matchLabels");
    const json_t *exprs = is_map ? NULL : json_object_get(selector, "matchExpressions");
    size_t cap = json_object_size(labels) + json_array_size(exprs);
    requirement *reqs = calloc(cap ? cap : 1, sizeof *reqs);
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)labels, key, v)
    {
        if (!json_is_string(v))
            continue;
        sk_buf b = SK_BUF_INIT;
        sk_buf_printf(&b, "%s=%s", key, json_string_value(v));
        reqs[n].key = key;
        reqs[n++].text = sk_buf_steal(&b, NULL);
    }
    size_t i;
    json_array_foreach((json_t *)exprs, i, v)
    {
        const char *k = json_string_value(json_object_get(v, "key"));
        const char *op = json_string_value(json_object_get(v, "operator"));
        const json_t *values = json_object_get(v, "values");
        char *text = NULL;
        if (!k || !op)
            continue;
        if (strcmp(op, "In") == 0) {
            text = set_requirement(k, "in", values);
        } else if (strcmp(op, "NotIn") == 0) {
            text = set_requirement(k, "notin", values);
        } else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
            sk_buf b = SK_BUF_INIT;
            sk_buf_printf(&b, "%s%s", op[0] == 'D' ? "!" : "", k);
            text = sk_buf_steal(&b, NULL);
        }
        if (text) {
            reqs[n].key = k;
            reqs[n++].text = text;
        }
    }
    qsort(reqs, n, sizeof *reqs, by_key);
    sk_buf out = SK_BUF_INIT;
    sk_buf_puts(&out, "");
    for (i = 0; i < n; i++) {
        sk_buf_printf(&out, "%s%s", i ? "," : "", reqs[i].text);
        free(reqs[i].text);
    }
    free(reqs);
    return sk_buf_steal(&out, NULL);
}

/* The value at a CRD's scale path (".spec.replicas": validated to be a
 * dotted path) in o, or NULL; with create, the objects on the way are made
 * and the parent object of the last key is returned with *last set. */
static json_t *scale_path(json_t *o, const char *path, int create, const char **last)
{
    char key[256];
    const char *p = path + (*path == '.');
    while (o && *p) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof key)
            return NULL;
        if (create && !p[n]) {
            *last = p;
            return o;
        }
        memcpy(key, p, n);
        key[n] = '\0';
        json_t *next = json_object_get(o, key);
        if (create && !json_is_object(next)) {
            next = json_object();
            json_object_set_new(o, key, next);
        }
        o = json_is_object(o) || !create ? next : NULL;
        p += n + (p[n] == '.');
    }
    return o;
}

/* Is r's spec.selector a plain label map rather than a LabelSelector? */
static int selector_is_map(const sk_resource *r)
{
    const sk_schema_field *spec = sk_schema_field_find(r->schema, "spec", 4);
    const sk_schema_field *sel =
        spec ? sk_schema_field_find(sk_schema_field_type(spec), "selector", 8) : NULL;
    return sel && sk_schema_kind_of(sk_schema_field_type(sel)) == SK_SCHEMA_MAP;
}


json_t *sk_scale_view(const sk_resource *r, const json_t *parent)
{
    const json_t *pm = json_object_get(parent, "metadata");
    const json_t *spec = json_object_get(parent, "spec");
    json_t *meta = json_object();
    static const char *const keep[] = {"name", "namespace", "uid", "resourceVersion",
                                       "creationTimestamp"};
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        json_t *v = json_object_get(pm, keep[i]);
        if (v)
            json_object_set(meta, keep[i], v);
    }
    json_t *scale_spec = json_object();
    const sk_custom *c = r->custom;
    json_int_t replicas =
        json_integer_value(c ? scale_path((json_t *)parent, c->spec_replicas, 0, NULL)
                             : json_object_get(spec, "replicas"));
    if (replicas)
        json_object_set_new(scale_spec, "replicas", json_integer(replicas));
    json_t *status = json_object();
    json_object_set_new(
        status, "replicas",
        json_integer(json_integer_value(
            c ? scale_path((json_t *)parent, c->status_replicas, 0, NULL)
              : json_object_get(json_object_get(parent, "status"), "replicas"))));
    /* A custom resource's selector is a string at its labelSelectorPath;
     * a built-in kind's is spec.selector, a LabelSelector or, where the
     * schema says it is a map (ReplicationController), a plain map. */
    const char *custom_sel =
        c && c->label_selector
            ? json_string_value(scale_path((json_t *)parent, c->label_selector, 0, NULL))
            : NULL;
    char *sel =
        c ? strdup(custom_sel ? custom_sel : "")
          : sk_scale_selector_string(json_object_get(spec, "selector"), selector_is_map(r));
    SK_CHECK_ALLOC(sel);
    if (*sel)
        json_object_set_new(status, "selector", json_string(sel));
    free(sel);
    return json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", "Scale", "apiVersion", "autoscaling/v1",
                     "metadata", meta, "spec", scale_spec, "status", status);
}

sk_err sk_scale_apply(const sk_resource *r, const json_t *scale, json_t *parent, char **msg)
{
    sk_err err = SK_OK;
    sk_buf b = SK_BUF_INIT;
    const char *kind = json_string_value(json_object_get(scale, "kind"));
    const char *av = json_string_value(json_object_get(scale, "apiVersion"));
    if ((kind && *kind && strcmp(kind, "Scale") != 0) ||
        (av && *av && strcmp(av, "autoscaling/v1") != 0)) {
        sk_buf_printf(&b, "the body of the request is a %s %s, expected an autoscaling/v1 Scale",
                      av ? av : "", kind ? kind : "");
        err = SK_ERR_BAD_REQUEST;
        goto out;
    }
    const json_t *replicas = json_object_get(json_object_get(scale, "spec"), "replicas");
    json_int_t n = replicas ? json_integer_value(replicas) : 0;
    if ((replicas && !json_is_integer(replicas)) || n < 0 || n > INT32_MAX) {
        sk_buf_printf(&b,
                      "Scale.autoscaling \"%s\" is invalid: spec.replicas: Invalid value: %lld: "
                      "must be greater than or equal to 0",
                      json_string_value(json_object_get(json_object_get(scale, "metadata"), "name"))
                          ?: "",
                      (long long)n);
        err = SK_ERR_INVALID;
        goto out;
    }
    const char *key = "replicas";
    json_t *spec = r->custom ? scale_path(parent, r->custom->spec_replicas, 1, &key)
                             : json_object_get(parent, "spec");
    if (!r->custom && !json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(parent, "spec", spec);
    }
    if (json_is_object(spec))
        json_object_set_new(spec, key, json_integer(n));
out:
    if (err != SK_OK)
        *msg = sk_buf_steal(&b, NULL);
    sk_buf_free(&b);
    return err;
}

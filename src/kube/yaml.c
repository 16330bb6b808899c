/*
 * yaml.c - see yaml.h.
 *
 * libyaml's document loader builds the node graph (aliases resolved to node
 * ids); we convert it recursively. An alias makes a node reachable more
 * than once, so a "billion laughs" document would expand exponentially:
 * the conversion counts the values it makes and stops at a bound well
 * above what a request body of our size limit can hold honestly.
 */
#include "kube/yaml.h"
#include "core/buf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_VALUES (4 * 1024 * 1024)

typedef struct conv {
    yaml_document_t *doc;
    int max_depth;
    size_t values;
    const char *err;
    json_t *dups; /* borrowed, or NULL */
} conv;

static int is_one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

/* A plain scalar as YAML 1.1's resolvers (go-yaml's) read it. */
static json_t *plain_scalar(const char *s, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                        "on",   "On",   "ON",   "y",   "Y",   NULL};
    static const char *const falses[] = {"false", "False", "FALSE", "no", "No", "NO",
                                         "off",   "Off",   "OFF",   "n",  "N",  NULL};
    if (strlen(s) != len)
        return json_stringn(s, len); /* a NUL inside: only a string can hold it */
    if (is_one_of(s, nulls))
        return json_null();
    if (is_one_of(s, trues))
        return json_true();
    if (is_one_of(s, falses))
        return json_false();
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 0);
    if (*s && *end == 0 && errno == 0 && s[strspn(s, "+-0123456789xXoOabcdefABCDEF")] == 0)
        return json_integer(i);
    if (strcmp(s, ".inf") == 0 || strcmp(s, "+.inf") == 0 || strcmp(s, "-.inf") == 0 ||
        strcasecmp(s, ".nan") == 0)
        return json_string(s); /* JSON has no infinities: kube's converter fails on them too */
    errno = 0;
    double d = strtod(s, &end);
    if (*s && *end == 0 && errno == 0 && isfinite(d) && s[strspn(s, "+-.0123456789eE")] == 0)
        return json_real(d);
    return json_string(s);
}

static json_t *convert(conv *c, yaml_node_t *n, int depth)
{
    if (!n) {
        c->err = "unknown anchor";
        return NULL;
    }
    if (depth > c->max_depth) {
        c->err = "the document is nested too deeply";
        return NULL;
    }
    if (++c->values > MAX_VALUES) {
        c->err = "the document expands to too many values";
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE: {
        const char *s = (const char *)n->data.scalar.value;
        size_t len = n->data.scalar.length;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            return plain_scalar(s, len);
        return json_stringn(s, len);
    }
    case YAML_SEQUENCE_NODE: {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            json_t *v = convert(c, yaml_document_get_node(c->doc, *it), depth + 1);
            if (!v) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, v);
        }
        return a;
    }
    case YAML_MAPPING_NODE: {
        json_t *o = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
            if (!k || k->type != YAML_SCALAR_NODE) {
                c->err = "only string keys are supported";
                json_decref(o);
                return NULL;
            }
            json_t *v = convert(c, yaml_document_get_node(c->doc, p->value), depth + 1);
            if (!v) {
                json_decref(o);
                return NULL;
            }
            const char *key = (const char *)k->data.scalar.value;
            size_t klen = k->data.scalar.length;
            if (c->dups && json_object_getn(o, key, klen)) {
                sk_buf d = SK_BUF_INIT;
                sk_buf_printf(&d, "line %zu: key ", k->start_mark.line + 1);
                sk_buf_go_quoted(&d, key);
                sk_buf_puts(&d, " already set in map");
                json_array_append_new(c->dups, json_string(d.data));
                sk_buf_free(&d);
            }
            json_object_setn_new(o, key, klen, v);
        }
        return o;
    }
    default:
        return json_null();
    }
}

sk_err sk_yaml_to_json(const char *text, size_t len, int max_depth, json_t **out, char **errmsg,
                       json_t *dups)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    sk_buf msg = SK_BUF_INIT;
    sk_err err = SK_OK;
    if (!yaml_parser_initialize(&parser)) {
        *errmsg = strdup("error converting YAML to JSON: yaml: out of memory");
        return SK_ERR_INTERNAL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        sk_buf_printf(&msg, "error converting YAML to JSON: yaml: line %zu: %s",
                      (parser.problem_mark.line + 1), parser.problem ? parser.problem : "error");
        err = SK_ERR_BAD_REQUEST;
        goto out;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    json_t *v = json_null();
    if (root) {
        conv c = {&doc, max_depth, 0, NULL, dups};
        v = convert(&c, root, 0);
        if (!v) {
            sk_buf_printf(&msg, "error converting YAML to JSON: yaml: %s", c.err);
            err = SK_ERR_BAD_REQUEST;
        }
    }
    yaml_document_delete(&doc);
    if (err == SK_OK)
        *out = v;
out:
    yaml_parser_delete(&parser);
    if (err != SK_OK)
        *errmsg = sk_buf_steal(&msg, NULL);
    return err;
}

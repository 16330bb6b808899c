/*
 * validate.c - kube-apiserver 1.32 validation for the kinds sqlkube serves.
 *
 * Mirrors k8s.io/apimachinery/pkg/api/validation (ObjectMeta, names per
 * kind), pkg/apis/core/validation (ConfigMap, Secret, Namespace,
 * ServiceAccount, Events, the first checks of Pod and Service and their
 * immutable fields), pkg/apis/{apps,batch}/validation (selectors matching
 * templates, restart policies, immutable selectors and Job templates) and
 * pkg/apis/coordination/validation (Lease): the same checks, in the same
 * order, with the same field paths and message text, so the aggregated
 * Status message is what kubectl would print. Two bodies are not
 * reproduced byte for byte: the diff kube appends to the Pod update
 * Forbidden, and the %#v dump of an immutable Job template.
 *
 * Before validating, the object must decode as its Go type (kube/typed.h;
 * 400, "cannot be handled as a ..."): every check here may then assume
 * strings are strings. Admission validates the typed round trip's output
 * (sk_validate_typed), so absent, null and zero values look alike, as they
 * do to Go code.
 *
 * Name formats are hand-written matchers for the upstream regexes; the
 * messages embed the upstream regex text verbatim because clients see it.
 */
#include "kube/validate.h"
#include "cel/admission.h"
#include "kube/status.h"
#include "kube/typed.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/util.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages (k8s.io/apimachinery/pkg/util/validation) ---------------- */

#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_ERR                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '" QNAME_FMT "')"
#define LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define SUBDOMAIN_ERR                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "       \
    "used for validation is '" LABEL_FMT "(\\." LABEL_FMT ")*')"

static const char msg_qname[] =
    "a qualified name " QNAME_ERR " with an optional DNS subdomain prefix and '/' (e.g. "
    "'example.com/MyName')";
static const char msg_name_part[] = "name part " QNAME_ERR;
static const char msg_name_part_empty[] = "name part must be non-empty";
static const char msg_name_part_long[] = "name part must be no more than 63 characters";
static const char msg_prefix_empty[] = "prefix part must be non-empty";
static const char msg_prefix_long[] = "prefix part must be no more than 253 characters";
static const char msg_prefix[] = "prefix part " SUBDOMAIN_ERR;
static const char msg_subdomain[] = SUBDOMAIN_ERR;
static const char msg_subdomain_long[] = "must be no more than 253 characters";
static const char msg_label[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '" LABEL_FMT "')";
static const char msg_63[] = "must be no more than 63 characters";
static const char msg_label_value[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(" QNAME_FMT ")?')";
static const char msg_config_key[] =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')";
static const char msg_immutable_set[] = "field is immutable when `immutable` is set";

#define MAX_OBJECT_SIZE (1024 * 1024) /* core.MaxSecretSize */
#define EVENT_FIELD_LIMIT 128         /* reportingInstance, action, reason */
#define EVENT_NOTE_LIMIT 1024         /* message */

/* ---- field error list -------------------------------------------------- */

struct sk_field_errors {
    json_t *causes;
    char **msgs; /* "<field>: <body>" per error */
    size_t n;
};

sk_field_errors *sk_field_errors_new(void)
{
    sk_field_errors *fe = calloc(1, sizeof *fe);
    SK_CHECK_ALLOC(fe);
    fe->causes = json_array();
    return fe;
}

void sk_field_errors_free(sk_field_errors *fe)
{
    if (!fe)
        return;
    for (size_t i = 0; i < fe->n; i++)
        free(fe->msgs[i]);
    free(fe->msgs);
    json_decref(fe->causes);
    free(fe);
}

size_t sk_field_errors_count(const sk_field_errors *fe)
{
    return fe->n;
}

/* reason is the field.ErrorType string, which is also the Status cause type. */
static void fe_add(sk_field_errors *fe, const char *reason, const char *field, const char *body)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "%s: %s", field, body);
    fe->msgs = realloc(fe->msgs, (fe->n + 1) * sizeof *fe->msgs);
    SK_CHECK_ALLOC(fe->msgs);
    fe->msgs[fe->n++] = sk_buf_steal(&m, NULL);
    sk_status_add_cause(fe->causes, reason, body, field);
}

/* field.Invalid whose value is already rendered (quoted string, number, %#v). */
static void fe_invalid_rendered(sk_field_errors *fe, const char *field, const char *value,
                                const char *detail)
{
    sk_buf body = SK_BUF_INIT;
    sk_buf_printf(&body, "Invalid value: %s", value);
    if (detail && *detail)
        sk_buf_printf(&body, ": %s", detail);
    fe_add(fe, "FieldValueInvalid", field, body.data);
    sk_buf_free(&body);
}

void sk_field_errors_invalid(sk_field_errors *fe, const char *field, const char *value,
                             const char *detail)
{
    sk_buf q = SK_BUF_INIT;
    sk_buf_go_quoted(&q, value);
    fe_invalid_rendered(fe, field, q.data, detail);
    sk_buf_free(&q);
}

static void fe_invalid_int(sk_field_errors *fe, const char *field, json_int_t v, const char *detail)
{
    char num[32];
    snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, v);
    fe_invalid_rendered(fe, field, num, detail);
}

/* "<Type>[: detail]" for the error types whose body never shows the value. */
static void fe_no_value(sk_field_errors *fe, const char *reason, const char *type,
                        const char *field, const char *detail)
{
    sk_buf body = SK_BUF_INIT;
    sk_buf_puts(&body, type);
    if (detail && *detail)
        sk_buf_printf(&body, ": %s", detail);
    fe_add(fe, reason, field, body.data);
    sk_buf_free(&body);
}

void sk_field_errors_required(sk_field_errors *fe, const char *field, const char *detail)
{
    fe_no_value(fe, "FieldValueRequired", "Required value", field, detail);
}

void sk_field_errors_forbidden(sk_field_errors *fe, const char *field, const char *detail)
{
    fe_no_value(fe, "FieldValueForbidden", "Forbidden", field, detail);
}

void sk_field_errors_too_long(sk_field_errors *fe, const char *field, long max)
{
    sk_buf d = SK_BUF_INIT;
    if (max >= 0)
        sk_buf_printf(&d, "may not be more than %ld bytes", max);
    else
        sk_buf_puts(&d, "value is too long");
    fe_no_value(fe, "FieldValueTooLong", "Too long", field, d.data);
    sk_buf_free(&d);
}

/* Go's %#v of a JSON value decoded into interface{} (int64, float64, ...). */
static void go_sharp_v(sk_buf *b, const json_t *v)
{
    const char *k;
    const json_t *e;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        /* fmt prints map keys sorted. */
        size_t n = json_object_size(v), j = 0;
        const char **keys = calloc(n ? n : 1, sizeof *keys);
        SK_CHECK_ALLOC(keys);
        json_object_foreach((json_t *)v, k, e) keys[j++] = k;
        qsort(keys, n, sizeof *keys, sk_cmp_strp);
        sk_buf_puts(b, "map[string]interface {}{");
        for (j = 0; j < n; j++) {
            if (j)
                sk_buf_puts(b, ", ");
            sk_buf_go_quoted(b, keys[j]);
            sk_buf_putc(b, ':');
            go_sharp_v(b, json_object_get(v, keys[j]));
        }
        sk_buf_putc(b, '}');
        free(keys);
        break;
    }
    case JSON_ARRAY:
        sk_buf_puts(b, "[]interface {}{");
        json_array_foreach(v, i, e)
        {
            if (i)
                sk_buf_puts(b, ", ");
            go_sharp_v(b, e);
        }
        sk_buf_putc(b, '}');
        break;
    case JSON_STRING:
        sk_buf_go_quoted(b, json_string_value(v));
        break;
    case JSON_INTEGER:
        sk_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        sk_buf_go_float(b, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        sk_buf_puts(b, json_is_true(v) ? "true" : "false");
        break;
    default:
        sk_buf_puts(b, "interface {}(nil)");
    }
}

/* A BadValue as field.Error's body renders it: null as "null", strings
 * quoted, numbers and booleans bare, objects and arrays as %#v. */
static void go_bad_value(sk_buf *b, const json_t *v)
{
    if (!v || json_is_null(v))
        sk_buf_go_quoted(b, "null");
    else
        go_sharp_v(b, v);
}

static void fe_with_value(sk_field_errors *fe, const char *reason, const char *type,
                          const char *field, const json_t *value, const char *detail)
{
    sk_buf body = SK_BUF_INIT;
    sk_buf_printf(&body, "%s: ", type);
    go_bad_value(&body, value);
    if (detail && *detail)
        sk_buf_printf(&body, ": %s", detail);
    fe_add(fe, reason, field, body.data);
    sk_buf_free(&body);
}

void sk_field_errors_invalid_json(sk_field_errors *fe, const char *field, const json_t *value,
                                  const char *detail)
{
    fe_with_value(fe, "FieldValueInvalid", "Invalid value", field, value, detail);
}

void sk_field_errors_type_invalid(sk_field_errors *fe, const char *field, const json_t *value,
                                  const char *detail)
{
    fe_with_value(fe, "FieldValueTypeInvalid", "Invalid value", field, value, detail);
}

void sk_field_errors_duplicate(sk_field_errors *fe, const char *field, const json_t *value)
{
    fe_with_value(fe, "FieldValueDuplicate", "Duplicate value", field, value, NULL);
}

void sk_field_errors_too_many(sk_field_errors *fe, const char *field, long actual, long max)
{
    sk_buf body = SK_BUF_INIT;
    sk_buf_puts(&body, "Too many");
    if (actual >= 0)
        sk_buf_printf(&body, ": %ld", actual);
    if (max >= 0)
        sk_buf_printf(&body, ": must have at most %ld items", max);
    else
        sk_buf_puts(&body, ": has too many items");
    fe_add(fe, "FieldValueTooMany", field, body.data);
    sk_buf_free(&body);
}

/* field.NotSupported's detail: `supported values: "a", "b"` ("" when n == 0). */
static void put_supported(sk_buf *d, const char *const *supported, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sk_buf_puts(d, i ? ", " : "supported values: ");
        sk_buf_go_quoted(d, supported[i]);
    }
}

void sk_field_errors_not_supported(sk_field_errors *fe, const char *field, const json_t *value,
                                   const char *const *supported, size_t n)
{
    sk_buf d = SK_BUF_INIT;
    put_supported(&d, supported, n);
    fe_with_value(fe, "FieldValueNotSupported", "Unsupported value", field, value, d.data);
    sk_buf_free(&d);
}

void sk_field_errors_not_supported_rendered(sk_field_errors *fe, const char *field,
                                            const char *value, const char *const *supported,
                                            size_t n)
{
    sk_buf body = SK_BUF_INIT;
    sk_buf_printf(&body, "Unsupported value: %s", value);
    if (n > 0)
        sk_buf_puts(&body, ": ");
    put_supported(&body, supported, n);
    fe_add(fe, "FieldValueNotSupported", field, body.data);
    sk_buf_free(&body);
}

const json_t *sk_field_errors_causes(const sk_field_errors *fe)
{
    return fe->causes;
}

void sk_field_errors_invalid_rendered(sk_field_errors *fe, const char *field, const char *value,
                                      const char *detail)
{
    fe_invalid_rendered(fe, field, value, detail);
}

void sk_field_errors_append(sk_field_errors *dst, const sk_field_errors *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const json_t *c = json_array_get(src->causes, i);
        dst->msgs = realloc(dst->msgs, (dst->n + 1) * sizeof *dst->msgs);
        SK_CHECK_ALLOC(dst->msgs);
        dst->msgs[dst->n] = strdup(src->msgs[i]);
        SK_CHECK_ALLOC(dst->msgs[dst->n]);
        dst->n++;
        json_array_append_new(dst->causes, json_deep_copy(c));
    }
}

typedef struct {
    char *msg;
    json_t *cause;
} fe_entry;

static int by_msg(const void *a, const void *b)
{
    const fe_entry *x = a, *y = b;
    return strcmp(x->msg, y->msg);
}

void sk_field_errors_sort(sk_field_errors *fe)
{
    fe_entry *e = calloc(fe->n ? fe->n : 1, sizeof *e);
    SK_CHECK_ALLOC(e);
    for (size_t i = 0; i < fe->n; i++)
        e[i] = (fe_entry){fe->msgs[i], json_incref(json_array_get(fe->causes, i))};
    /* Stable enough: equal messages are the same error. */
    qsort(e, fe->n, sizeof *e, by_msg);
    json_array_clear(fe->causes);
    for (size_t i = 0; i < fe->n; i++) {
        fe->msgs[i] = e[i].msg;
        json_array_append_new(fe->causes, e[i].cause);
    }
    free(e);
}

typedef struct {
    const char *msg;
    size_t i;
} msg_at;

static int by_msg_then_index(const void *a, const void *b)
{
    const msg_at *x = a, *y = b;
    int c = strcmp(x->msg, y->msg);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

char *sk_field_errors_message(const sk_field_errors *fe)
{
    sk_buf out = SK_BUF_INIT;
    size_t unique = 0;
    SK_CHECK(fe->n > 0);
    /* Repeats found by sorting, not pairwise: a custom resource with a
     * long list of bad items has as many errors. */
    msg_at *sorted = calloc(fe->n, sizeof *sorted);
    char *repeat = calloc(fe->n, 1);
    SK_CHECK_ALLOC(sorted);
    SK_CHECK_ALLOC(repeat);
    for (size_t i = 0; i < fe->n; i++)
        sorted[i] = (msg_at){fe->msgs[i], i};
    qsort(sorted, fe->n, sizeof *sorted, by_msg_then_index);
    for (size_t i = 1; i < fe->n; i++)
        repeat[sorted[i].i] = strcmp(sorted[i].msg, sorted[i - 1].msg) == 0;
    for (size_t i = 0; i < fe->n; i++) {
        if (repeat[i])
            continue;
        if (unique++ > 0)
            sk_buf_puts(&out, ", ");
        sk_buf_puts(&out, fe->msgs[i]);
    }
    free(sorted);
    free(repeat);
    if (unique > 1) {
        sk_buf wrapped = SK_BUF_INIT;
        sk_buf_printf(&wrapped, "[%s]", out.data);
        sk_buf_free(&out);
        out = wrapped;
    }
    return sk_buf_steal(&out, NULL);
}

/* ---- name formats ------------------------------------------------------ */

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static int match_dns_label(const char *s, size_t len)
{
    if (len == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

/* label(\.label)* */
static int match_subdomain(const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (!match_dns_label(s + start, i - start))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static int match_qname_part(const char *s, size_t len)
{
    if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

static size_t subdomain_msgs(const char *s, size_t len, int as_prefix, const char **msgs)
{
    size_t n = 0;
    if (len > 253)
        msgs[n++] = as_prefix ? msg_prefix_long : msg_subdomain_long;
    if (!match_subdomain(s, len))
        msgs[n++] = as_prefix ? msg_prefix : msg_subdomain;
    return n;
}

static size_t label_msgs(const char *s, const char **msgs)
{
    size_t n = 0, len = strlen(s);
    if (len > 63)
        msgs[n++] = msg_63;
    if (!match_dns_label(s, len))
        msgs[n++] = msg_label;
    return n;
}

size_t sk_validate_annotations_size(const json_t *annotations)
{
    size_t n = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)annotations, k, v)
    {
        n += strlen(k) + (json_string_value(v) ? json_string_length(v) : 0);
    }
    return n;
}

const char *sk_validate_dns1123_subdomain(const char *s)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    return subdomain_msgs(s, strlen(s), 0, msgs) ? msgs[0] : NULL;
}

const char *sk_validate_dns1123_label(const char *s)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    return label_msgs(s, msgs) ? msgs[0] : NULL;
}

size_t sk_validate_qualified_name(const char *s, const char *msgs[SK_VALIDATE_MAX_MSGS])
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    size_t n = 0;
    if (slash && strchr(slash + 1, '/')) {
        msgs[n++] = msg_qname;
        return n;
    }
    if (slash) {
        size_t plen = (size_t)(slash - s);
        if (plen == 0)
            msgs[n++] = msg_prefix_empty;
        else
            n += subdomain_msgs(s, plen, 1, msgs + n);
        name = slash + 1;
    }
    size_t len = strlen(name);
    if (len == 0)
        msgs[n++] = msg_name_part_empty;
    else if (len > 63)
        msgs[n++] = msg_name_part_long;
    if (!match_qname_part(name, len))
        msgs[n++] = msg_name_part;
    return n;
}

size_t sk_validate_label_value(const char *s, const char *msgs[SK_VALIDATE_MAX_MSGS])
{
    size_t n = 0, len = strlen(s);
    if (len > 63)
        msgs[n++] = msg_63;
    if (len > 0 && !match_qname_part(s, len))
        msgs[n++] = msg_label_value;
    return n;
}

static size_t config_key_msgs(const char *s, const char **msgs)
{
    size_t n = 0, len = strlen(s);
    int ok = len > 0;
    for (size_t i = 0; i < len && ok; i++)
        ok = is_alnum(s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.';
    if (len > 253)
        msgs[n++] = msg_subdomain_long;
    if (!ok)
        msgs[n++] = msg_config_key;
    if (strcmp(s, ".") == 0)
        msgs[n++] = "must not be '.'";
    else if (strcmp(s, "..") == 0)
        msgs[n++] = "must not be '..'";
    else if (strncmp(s, "..", 2) == 0)
        msgs[n++] = "must not start with '..'";
    return n;
}

/* How a kind's metadata.name is checked (upstream ValidateNameFunc). */
typedef enum { NAME_SUBDOMAIN, NAME_LABEL, NAME_DNS1035, NAME_PATH_SEGMENT } name_rule;

static const char msg_dns1035[] =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/* IsDNS1035Label: a DNS-1123 label that starts with a letter. */
static size_t dns1035_msgs(const char *s, const char **msgs)
{
    size_t n = 0, len = strlen(s);
    if (len > 63)
        msgs[n++] = msg_63;
    if (!match_dns_label(s, len) || !(s[0] >= 'a' && s[0] <= 'z'))
        msgs[n++] = msg_dns1035;
    return n;
}

size_t sk_validate_dns1035_label(const char *s, const char *msgs[SK_VALIDATE_MAX_MSGS])
{
    return dns1035_msgs(s, msgs);
}

/* Messages for name; prefix is set for generateName, whose trailing '-' is
 * masked first (upstream maskTrailingDash). */
static size_t name_msgs(name_rule rule, const char *name, int prefix, const char **msgs)
{
    size_t len = strlen(name), n = 0;
    char *masked = NULL;
    if (rule == NAME_PATH_SEGMENT) {
        if (!prefix && (strcmp(name, ".") == 0 || strcmp(name, "..") == 0))
            msgs[n++] = strcmp(name, ".") == 0 ? "may not be '.'" : "may not be '..'";
        else {
            if (strchr(name, '/'))
                msgs[n++] = "may not contain '/'";
            if (strchr(name, '%'))
                msgs[n++] = "may not contain '%'";
        }
        goto out;
    }
    /* maskTrailingDash drops the last two bytes for one 'a' (name[:len-2] +
     * "a"), so a prefix one over the limit that ends in '-' still passes. */
    if (prefix && len > 1 && name[len - 1] == '-') {
        masked = malloc(len);
        SK_CHECK_ALLOC(masked);
        memcpy(masked, name, len - 2);
        masked[len - 2] = 'a';
        masked[len - 1] = '\0';
        name = masked;
        len--;
    }
    if (rule == NAME_DNS1035)
        n = dns1035_msgs(name, msgs);
    else
        n = rule == NAME_LABEL ? label_msgs(name, msgs) : subdomain_msgs(name, len, 0, msgs);
out:
    free(masked);
    return n;
}

size_t sk_validate_name_is(sk_validate_name_kind kind, const char *s, int prefix,
                           const char *msgs[SK_VALIDATE_MAX_MSGS])
{
    static const name_rule rules[] = {
        [SK_VALIDATE_DNS1123_SUBDOMAIN] = NAME_SUBDOMAIN,
        [SK_VALIDATE_DNS1123_LABEL] = NAME_LABEL,
        [SK_VALIDATE_DNS1035_LABEL] = NAME_DNS1035,
    };
    return name_msgs(rules[kind], s, prefix, msgs);
}

/* ---- helpers ---------------------------------------------------------- */

/* The value at a dotted path (borrowed); NULL if absent or JSON null. */
static const json_t *at(const json_t *obj, const char *path)
{
    char seg[64];
    const json_t *cur = obj;
    while (cur && *path) {
        size_t len = strcspn(path, ".");
        SK_CHECK(len < sizeof seg);
        memcpy(seg, path, len);
        seg[len] = '\0';
        cur = json_is_object(cur) ? json_object_get(cur, seg) : NULL;
        path += len + (path[len] == '.');
    }
    return json_is_null(cur) ? NULL : cur;
}

static const char *str_at(const json_t *obj, const char *path)
{
    return json_string_value(at(obj, path));
}

/* ---- ObjectMeta -------------------------------------------------------- */

static void invalid_each(sk_field_errors *fe, const char *field, const char *value,
                         const char **msgs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sk_field_errors_invalid(fe, field, value, msgs[i]);
}

static int is_standard_finalizer(const char *f)
{
    return strcmp(f, "kubernetes") == 0 || strcmp(f, "orphan") == 0 ||
           strcmp(f, "foregroundDeletion") == 0;
}

/* apimachinery ValidateFinalizers for the list at field. */
static void validate_finalizers(sk_field_errors *fe, const json_t *list, const char *field)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    size_t i;
    const json_t *f;
    int orphan = 0, foreground = 0;
    json_array_foreach(list, i, f)
    {
        const char *s = json_string_value(f) ? json_string_value(f) : "";
        invalid_each(fe, field, s, msgs, sk_validate_qualified_name(s, msgs));
        orphan |= strcmp(s, "orphan") == 0;
        foreground |= strcmp(s, "foregroundDeletion") == 0;
    }
    if (orphan && foreground) {
        sk_buf v = SK_BUF_INIT;
        sk_go_string_slice(&v, list);
        fe_invalid_rendered(fe, field, v.data,
                            "finalizer orphan and foregroundDeletion cannot be both set");
        sk_buf_free(&v);
    }
}

/* pkg/apis/core validateKubeFinalizerName for the list at field. */
static void validate_kube_finalizers(sk_field_errors *fe, const json_t *list, const char *field)
{
    size_t i;
    const json_t *f;
    json_array_foreach(list, i, f)
    {
        const char *s = json_string_value(f) ? json_string_value(f) : "";
        if (!strchr(s, '/') && !is_standard_finalizer(s))
            sk_field_errors_invalid(fe, field, s,
                                    "name is neither a standard finalizer name nor is it fully "
                                    "qualified");
    }
}

/* The field path "<base>.<name>", built in the caller's buffer (without
 * printf: every create builds several, error or not). */
static const char *sub(sk_buf *b, const char *base, const char *name)
{
    sk_buf_reset(b);
    sk_buf_puts(b, base);
    sk_buf_putc(b, '.');
    sk_buf_puts(b, name);
    return b->data;
}

static void validate_owner_refs(sk_field_errors *fe, const json_t *refs, const char *base)
{
    static const struct {
        const char *key, *field, *detail;
    } required[] = {
        {"kind", "ownerReferences.kind", "kind must not be empty"},
        {"name", "ownerReferences.name", "name must not be empty"},
        {"uid", "ownerReferences.uid", "uid must not be empty"},
    };
    size_t i;
    const json_t *ref;
    sk_buf f = SK_BUF_INIT;
    json_array_foreach(refs, i, ref)
    {
        const char *api = str_at(ref, "apiVersion") ? str_at(ref, "apiVersion") : "";
        const char *slash = strchr(api, '/');
        /* schema.ParseGroupVersion: "v", "g/v"; anything else has no version. */
        int has_version = slash ? slash[1] != '\0' && !strchr(slash + 1, '/') : *api != '\0';
        if (!has_version)
            sk_field_errors_invalid(fe, sub(&f, base, "ownerReferences.apiVersion"), api,
                                    "version must not be empty");
        for (size_t k = 0; k < sizeof required / sizeof required[0]; k++) {
            const char *v = str_at(ref, required[k].key);
            if (!v || !*v)
                sk_field_errors_invalid(fe, sub(&f, base, required[k].field), v ? v : "",
                                        required[k].detail);
        }
    }
    sk_buf_free(&f);
}

/* apimachinery ValidateObjectMeta of meta (the metadata object, may be
 * NULL) at field path at (plus core's finalizer check if kube). */
static void validate_meta_at(sk_field_errors *fe, const json_t *meta, const char *base,
                             int namespaced, name_rule rule, int kube)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    const char *gen = str_at(meta, "generateName");
    const char *name = str_at(meta, "name");
    const char *ns = str_at(meta, "namespace");
    const json_t *generation = at(meta, "generation");
    sk_buf f = SK_BUF_INIT;
    if (gen && *gen)
        invalid_each(fe, sub(&f, base, "generateName"), gen, msgs, name_msgs(rule, gen, 1, msgs));
    if (!name || !*name)
        sk_field_errors_required(fe, sub(&f, base, "name"), "name or generateName is required");
    else
        invalid_each(fe, sub(&f, base, "name"), name, msgs, name_msgs(rule, name, 0, msgs));
    if (namespaced && (!ns || !*ns))
        sk_field_errors_required(fe, sub(&f, base, "namespace"), "");
    else if (namespaced)
        invalid_each(fe, sub(&f, base, "namespace"), ns, msgs, label_msgs(ns, msgs));
    else if (ns && *ns)
        sk_field_errors_forbidden(fe, sub(&f, base, "namespace"), "not allowed on this type");
    if (generation && json_integer_value(generation) < 0)
        fe_invalid_int(fe, sub(&f, base, "generation"), json_integer_value(generation),
                       "must be greater than or equal to 0");
    sk_validate_labels(fe, at(meta, "labels"), sub(&f, base, "labels"));
    sk_validate_annotations(fe, at(meta, "annotations"), sub(&f, base, "annotations"));
    validate_owner_refs(fe, at(meta, "ownerReferences"), base);
    validate_finalizers(fe, at(meta, "finalizers"), sub(&f, base, "finalizers"));
    if (kube)
        validate_kube_finalizers(fe, at(meta, "finalizers"), sub(&f, base, "finalizers"));
    sk_buf_free(&f);
}

void sk_validate_labels(sk_field_errors *fe, const json_t *labels, const char *field)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)labels, k, v)
    {
        const char *val = json_string_value(v) ? json_string_value(v) : "";
        invalid_each(fe, field, k, msgs, sk_validate_qualified_name(k, msgs));
        invalid_each(fe, field, val, msgs, sk_validate_label_value(val, msgs));
    }
}

void sk_validate_annotations(sk_field_errors *fe, const json_t *annotations, const char *field)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)annotations, k, v)
    {
        /* Annotation keys are qualified names, case-insensitively. */
        char *lower = strdup(k);
        SK_CHECK_ALLOC(lower);
        for (char *c = lower; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        invalid_each(fe, field, k, msgs, sk_validate_qualified_name(lower, msgs));
        free(lower);
    }
    if (sk_validate_annotations_size(annotations) > SK_VALIDATE_MAX_ANNOTATIONS_SIZE)
        sk_field_errors_too_long(fe, field, SK_VALIDATE_MAX_ANNOTATIONS_SIZE);
}

static void validate_meta(sk_field_errors *fe, const json_t *obj, int namespaced, name_rule rule,
                          int kube)
{
    validate_meta_at(fe, at(obj, "metadata"), "metadata", namespaced, rule, kube);
}

void sk_validate_embedded_meta(sk_field_errors *fe, const json_t *meta, const char *base)
{
    const char *ns = str_at(meta, "namespace");
    const char *name = str_at(meta, "name");
    json_t *named = NULL;
    if (!name || !*name) {
        named = json_is_object(meta) ? json_copy((json_t *)meta) : json_object();
        json_object_set_new(named, "name", json_string("fakename"));
        meta = named;
    }
    validate_meta_at(fe, meta, base, ns && *ns, NAME_PATH_SEGMENT, 0);
    json_decref(named);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ValidateObjectMetaUpdate's ValidateNoNewFinalizers: once an object is
 * being deleted, its finalizers may only go. */
static void validate_no_new_finalizers(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    if (!str_at(old, "metadata.deletionTimestamp"))
        return;
    const json_t *now = at(obj, "metadata.finalizers"), *before = at(old, "metadata.finalizers");
    size_t n = json_array_size(now), count = 0, i, k;
    const char **extra = calloc(n ? n : 1, sizeof *extra);
    SK_CHECK_ALLOC(extra);
    const json_t *f, *g;
    json_array_foreach(now, i, f)
    {
        const char *s = json_string_value(f) ? json_string_value(f) : "";
        int known = 0;
        json_array_foreach(before, k, g) known |=
            json_is_string(g) && !strcmp(json_string_value(g), s);
        for (k = 0; k < count && !known; k++)
            known = strcmp(extra[k], s) == 0;
        if (!known)
            extra[count++] = s;
    }
    if (count > 0) {
        qsort(extra, count, sizeof *extra, cmp_str);
        sk_buf m = SK_BUF_INIT;
        sk_buf_puts(&m, "no new finalizers can be added if the object is being deleted, found new "
                        "finalizers []string{");
        for (k = 0; k < count; k++) {
            if (k > 0)
                sk_buf_puts(&m, ", ");
            sk_buf_go_quoted(&m, extra[k]);
        }
        sk_buf_putc(&m, '}');
        sk_field_errors_forbidden(fe, "metadata.finalizers", m.data);
        sk_buf_free(&m);
    }
    free(extra);
}

/* ---- kinds ------------------------------------------------------------- */

static int is_true(const json_t *obj, const char *path)
{
    return json_is_true(at(obj, path));
}

/* ConfigMap/Secret `immutable`: once true, the flag and the data fields
 * named in fields (NULL-terminated) are frozen. */
static void validate_immutable(sk_field_errors *fe, const json_t *obj, const json_t *old,
                               const char *const *fields)
{
    if (!old || !is_true(old, "immutable"))
        return;
    if (!is_true(obj, "immutable"))
        sk_field_errors_forbidden(fe, "immutable", msg_immutable_set);
    for (; *fields; fields++) {
        const json_t *a = at(obj, *fields), *b = at(old, *fields);
        if ((a || b) && !(a && b && json_equal(a, b)))
            sk_field_errors_forbidden(fe, *fields, msg_immutable_set);
    }
}

/* Validates the keys of the string map at path, reporting under report_as;
 * returns the summed value sizes (decoded for base64 maps). */
static size_t validate_data_keys(sk_field_errors *fe, const json_t *map, const char *report_as,
                                 int base64, const json_t *dup_of, const char *dup_msg)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    const char *k;
    const json_t *v;
    size_t total = 0;
    json_object_foreach((json_t *)map, k, v)
    {
        sk_buf field = SK_BUF_INIT;
        sk_buf_puts(&field, report_as);
        sk_buf_putc(&field, '[');
        sk_buf_puts(&field, k);
        sk_buf_putc(&field, ']');
        invalid_each(fe, field.data, k, msgs, config_key_msgs(k, msgs));
        if (dup_of && json_object_get(dup_of, k))
            sk_field_errors_invalid(fe, field.data, k, dup_msg);
        sk_buf_free(&field);
        if (json_is_string(v))
            total +=
                base64 ? (size_t)sk_typed_base64_len(json_string_value(v)) : json_string_length(v);
    }
    return total;
}

static void validate_configmap(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    static const char *const frozen[] = {"data", "binaryData", NULL};
    const json_t *data = at(obj, "data"), *binary = at(obj, "binaryData");
    validate_immutable(fe, obj, old, frozen);
    validate_meta(fe, obj, 1, NAME_SUBDOMAIN, 1);
    size_t total =
        validate_data_keys(fe, data, "data", 0, binary, "duplicate of key present in binaryData");
    total += validate_data_keys(fe, binary, "binaryData", 1, NULL, NULL);
    if (total > MAX_OBJECT_SIZE)
        sk_field_errors_too_long(fe, "[]", MAX_OBJECT_SIZE);
}

static void validate_secret(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    static const char *const frozen[] = {"data", NULL};
    const json_t *data = at(obj, "data"), *string_data = at(obj, "stringData");
    const char *type = str_at(obj, "type") ? str_at(obj, "type") : "";
    if (old) {
        const char *old_type = str_at(old, "type") ? str_at(old, "type") : "";
        if (strcmp(type, old_type) != 0)
            sk_field_errors_invalid(fe, "type", type, "field is immutable");
    }
    validate_immutable(fe, obj, old, frozen);
    validate_meta(fe, obj, 1, NAME_SUBDOMAIN, 1);
    /* stringData is merged into data by conversion upstream, so its keys are
     * reported as data[...] and its values count towards data's size. */
    size_t total = validate_data_keys(fe, string_data, "data", 0, NULL, NULL);
    const char *k;
    const json_t *v;
    json_t *rest = json_object();
    json_object_foreach((json_t *)data, k, v)
    {
        if (!json_object_get(string_data, k))
            json_object_set((json_t *)rest, k, (json_t *)v);
    }
    total += validate_data_keys(fe, rest, "data", 1, NULL, NULL);
    json_decref(rest);
    if (total > MAX_OBJECT_SIZE)
        sk_field_errors_too_long(fe, "data", MAX_OBJECT_SIZE);

    /* Keys each well-known type requires (in data or stringData). */
    static const struct {
        const char *type;
        const char *keys[3];
        int any; /* one of keys suffices (basic-auth) */
    } required[] = {
        {"kubernetes.io/dockercfg", {".dockercfg", NULL}, 0},
        {"kubernetes.io/dockerconfigjson", {".dockerconfigjson", NULL}, 0},
        {"kubernetes.io/basic-auth", {"username", "password", NULL}, 1},
        {"kubernetes.io/ssh-auth", {"ssh-privatekey", NULL}, 0},
        {"kubernetes.io/tls", {"tls.crt", "tls.key", NULL}, 0},
    };
    if (strcmp(type, "kubernetes.io/service-account-token") == 0) {
        const json_t *ann = at(obj, "metadata.annotations");
        const char *sa =
            json_string_value(json_object_get(ann, "kubernetes.io/service-account.name"));
        if (!sa || !*sa)
            sk_field_errors_required(fe, "metadata.annotations[kubernetes.io/service-account.name]",
                                     "");
        return;
    }
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (strcmp(type, required[i].type) != 0)
            continue;
        int present = 0;
        for (const char *const *key = required[i].keys; *key; key++)
            present += json_object_get(data, *key) || json_object_get(string_data, *key);
        for (const char *const *key = required[i].keys; *key; key++) {
            int missing = !json_object_get(data, *key) && !json_object_get(string_data, *key);
            if (required[i].any ? present == 0 : missing) {
                sk_buf field = SK_BUF_INIT;
                sk_buf_printf(&field, "data[%s]", *key);
                sk_field_errors_required(fe, field.data, "");
                sk_buf_free(&field);
            }
        }
    }
}

static void validate_namespace(sk_field_errors *fe, const json_t *obj)
{
    const json_t *fins = at(obj, "spec.finalizers");
    validate_meta(fe, obj, 0, NAME_LABEL, 1);
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    size_t i;
    const json_t *f;
    json_array_foreach(fins, i, f)
    {
        const char *s = json_string_value(f) ? json_string_value(f) : "";
        invalid_each(fe, "spec.finalizers", s, msgs, sk_validate_qualified_name(s, msgs));
        if (!strchr(s, '/') && !is_standard_finalizer(s))
            sk_field_errors_invalid(fe, "spec.finalizers", s,
                                    "name is neither a standard finalizer name nor is it fully "
                                    "qualified");
    }
}

static void validate_lease(sk_field_errors *fe, const json_t *obj)
{
    const json_t *duration = at(obj, "spec.leaseDurationSeconds");
    const json_t *transitions = at(obj, "spec.leaseTransitions");
    const char *preferred = str_at(obj, "spec.preferredHolder");
    const char *strategy = str_at(obj, "spec.strategy");
    validate_meta(fe, obj, 1, NAME_SUBDOMAIN, 1);
    if (duration && json_integer_value(duration) <= 0)
        fe_invalid_int(fe, "spec.leaseDurationSeconds", json_integer_value(duration),
                       "must be greater than 0");
    if (transitions && json_integer_value(transitions) < 0)
        fe_invalid_int(fe, "spec.leaseTransitions", json_integer_value(transitions),
                       "must to greater or equal than 0");
    if (preferred && *preferred && (!strategy || !*strategy))
        sk_field_errors_forbidden(fe, "spec.preferredHolder",
                                  "may only be specified if `strategy` is defined");
}

static void too_long_invalid(sk_field_errors *fe, const char *field, const char *v, size_t limit)
{
    char detail[64];
    if (v && strlen(v) > limit) {
        snprintf(detail, sizeof detail, "can have at most %zu characters", limit);
        sk_field_errors_invalid(fe, field, "", detail);
    }
}

/* core legacyValidateEvent for requests in v1. */
static void validate_event_legacy(sk_field_errors *fe, const json_t *obj)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    const char *ns = str_at(obj, "metadata.namespace") ? str_at(obj, "metadata.namespace") : "";
    const char *ins = str_at(obj, "involvedObject.namespace");
    const char *controller = str_at(obj, "reportingComponent");
    ins = ins ? ins : "";
    if (!at(obj, "eventTime")) {
        int ok = *ins ? strcmp(ns, ins) == 0 : (*ns == '\0' || strcmp(ns, "default") == 0);
        if (!ok)
            sk_field_errors_invalid(fe, "involvedObject.namespace", ins,
                                    "does not match event.namespace");
    } else {
        if (!*ins && strcmp(ns, "default") != 0 && strcmp(ns, "kube-system") != 0)
            sk_field_errors_invalid(fe, "involvedObject.namespace", ins,
                                    "does not match event.namespace");
        if (!controller || !*controller)
            sk_field_errors_required(fe, "reportingComponent", "");
        controller = controller ? controller : "";
        invalid_each(fe, "reportingComponent", controller, msgs,
                     sk_validate_qualified_name(controller, msgs));
        static const char *const required[] = {"reportingInstance", "action", "reason"};
        for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
            const char *v = str_at(obj, required[i]);
            if (!v || !*v)
                sk_field_errors_required(fe, required[i], "");
            too_long_invalid(fe, required[i], v, EVENT_FIELD_LIMIT);
        }
        too_long_invalid(fe, "message", str_at(obj, "message"), EVENT_NOTE_LIMIT);
    }
    size_t n = subdomain_msgs(ns, strlen(ns), 0, msgs);
    invalid_each(fe, "namespace", ns, msgs, n);
}

/* ---- workloads, Pods, Services ----------------------------------------- */

static const char msg_selector_mismatch[] = "`selector` does not match template `labels`";
static const char msg_field_immutable[] = "field is immutable";
static const char msg_pod_update[] =
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
    "to 1 if it was previously negative)";

static void fe_typed(sk_field_errors *fe, const char *reason, const char *field, const char *body)
{
    fe_add(fe, reason, field, body);
}

/* field.NotSupported for a string value and its supported values (NULL-ended). */
static void fe_not_supported(sk_field_errors *fe, const char *field, const char *value,
                             const char *const *supported)
{
    size_t n = 0;
    json_t *v = json_string_nocheck(value);
    while (supported[n])
        n++;
    sk_field_errors_not_supported(fe, field, v, supported, n);
    json_decref(v);
}

/* Go's %#v of a map[string]string: keys sorted, `map[string]string(nil)` when nil. */
static void go_string_map(sk_buf *b, const json_t *m)
{
    if (!json_is_object(m)) {
        sk_buf_puts(b, "map[string]string(nil)");
        return;
    }
    size_t n = json_object_size(m), k = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    SK_CHECK_ALLOC(keys);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)m, key, v) keys[k++] = key;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    sk_buf_puts(b, "map[string]string{");
    for (size_t i = 0; i < n; i++) {
        const char *val = json_string_value(json_object_get(m, keys[i]));
        if (i)
            sk_buf_puts(b, ", ");
        sk_buf_go_quoted(b, keys[i]);
        sk_buf_putc(b, ':');
        sk_buf_go_quoted(b, val ? val : "");
    }
    sk_buf_putc(b, '}');
    free(keys);
}

/* Go's %#v of a (dereferenced) metav1.LabelSelector; "null" for nil. */
static void go_label_selector(sk_buf *b, const json_t *sel)
{
    if (!json_is_object(sel)) {
        sk_buf_puts(b, "null");
        return;
    }
    sk_buf_puts(b, "v1.LabelSelector{MatchLabels:");
    go_string_map(b, json_object_get(sel, "matchLabels"));
    sk_buf_puts(b, ", MatchExpressions:[]v1.LabelSelectorRequirement");
    const json_t *exprs = json_object_get(sel, "matchExpressions"), *e;
    if (!json_is_array(exprs)) {
        sk_buf_puts(b, "(nil)}");
        return;
    }
    sk_buf_putc(b, '{');
    size_t i;
    json_array_foreach(exprs, i, e)
    {
        const json_t *vals = json_object_get(e, "values"), *v;
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        sk_buf_puts(b,
                    i ? ", v1.LabelSelectorRequirement{Key:" : "v1.LabelSelectorRequirement{Key:");
        sk_buf_go_quoted(b, key ? key : "");
        sk_buf_puts(b, ", Operator:");
        sk_buf_go_quoted(b, op ? op : "");
        sk_buf_puts(b, ", Values:[]string");
        if (!json_is_array(vals)) {
            sk_buf_puts(b, "(nil)}");
            continue;
        }
        sk_buf_putc(b, '{');
        size_t j;
        json_array_foreach(vals, j, v)
        {
            if (j)
                sk_buf_puts(b, ", ");
            sk_buf_go_quoted(b, json_string_value(v) ? json_string_value(v) : "");
        }
        sk_buf_puts(b, "}}");
    }
    sk_buf_puts(b, "}}");
}

static int in_values(const json_t *vals, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(vals, i, v)
    {
        if (json_string_value(v) && strcmp(json_string_value(v), s) == 0)
            return 1;
    }
    return 0;
}

/* metav1.LabelSelectorAsSelector(sel).Matches(labels): a nil selector
 * matches nothing, an empty one everything. */
static int selector_matches(const json_t *sel, const json_t *labels)
{
    const char *k;
    const json_t *v, *e;
    size_t i;
    if (!json_is_object(sel))
        return 0;
    json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!have || !json_string_value(v) || strcmp(have, json_string_value(v)) != 0)
            return 0;
    }
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const json_t *vals = json_object_get(e, "values");
        const char *have = key ? json_string_value(json_object_get(labels, key)) : NULL;
        if (!op)
            return 0;
        if (strcmp(op, "In") == 0 && !(have && in_values(vals, have)))
            return 0;
        if (strcmp(op, "NotIn") == 0 && have && in_values(vals, have))
            return 0;
        if (strcmp(op, "Exists") == 0 && !have)
            return 0;
        if (strcmp(op, "DoesNotExist") == 0 && have)
            return 0;
    }
    return 1;
}

static int selector_empty(const json_t *sel)
{
    return json_object_size(json_object_get(sel, "matchLabels")) +
               json_array_size(json_object_get(sel, "matchExpressions")) ==
           0;
}

/* The "`selector` does not match template `labels`" check, unless the
 * selector selects everything (empty), as ValidatePodTemplateSpecFor*. */
static void check_selector_matches(sk_field_errors *fe, const json_t *sel, const json_t *tmpl,
                                   const char *field)
{
    const json_t *labels = at(tmpl, "metadata.labels");
    if (json_is_object(sel) && selector_empty(sel))
        return;
    if (selector_matches(sel, labels))
        return;
    sk_buf v = SK_BUF_INIT;
    go_string_map(&v, labels);
    fe_invalid_rendered(fe, field, v.data, msg_selector_mismatch);
    sk_buf_free(&v);
}

/* The checks of validateContainers users meet first: at least one (unless
 * optional), a DNS label name, unique names, an image. */
static void validate_containers(sk_field_errors *fe, const json_t *list, const char *path,
                                int required, json_t *names)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    size_t i;
    const json_t *c;
    if (required && json_array_size(list) == 0)
        sk_field_errors_required(fe, path, "");
    json_array_foreach(list, i, c)
    {
        const char *name = str_at(c, "name");
        const char *image = str_at(c, "image");
        sk_buf field = SK_BUF_INIT;
        sk_buf_printf(&field, "%s[%zu].name", path, i);
        if (!name || !*name) {
            sk_field_errors_required(fe, field.data, "");
        } else {
            invalid_each(fe, field.data, name, msgs, label_msgs(name, msgs));
            if (json_object_get(names, name)) {
                sk_buf d = SK_BUF_INIT;
                sk_buf_puts(&d, "Duplicate value: ");
                sk_buf_go_quoted(&d, name);
                fe_typed(fe, "FieldValueDuplicate", field.data, d.data);
                sk_buf_free(&d);
            }
            json_object_set_new(names, name, json_true());
        }
        field.len = 0;
        sk_buf_printf(&field, "%s[%zu].image", path, i);
        if (!image || !*image)
            sk_field_errors_required(fe, field.data, "");
        sk_buf_free(&field);
    }
}

/* ValidatePodSpec's container checks for the spec at path ("spec",
 * "spec.template.spec"). */
static void validate_pod_spec(sk_field_errors *fe, const json_t *spec, const char *path)
{
    json_t *names = json_object();
    sk_buf field = SK_BUF_INIT;
    sk_buf_printf(&field, "%s.containers", path);
    validate_containers(fe, at(spec, "containers"), field.data, 1, names);
    field.len = 0;
    sk_buf_printf(&field, "%s.initContainers", path);
    validate_containers(fe, at(spec, "initContainers"), field.data, 0, names);
    sk_buf_free(&field);
    json_decref(names);
}

/* Workload kinds: where the selector and template sit and what they require. */
typedef struct {
    const char *group, *kind;
    const char *selector_at, *template_at;
    int selector_required;
    const char *empty_selector;          /* detail for an empty selector, if refused */
    const char *const *restart_policies; /* supported template restartPolicy values */
    int restart_required;                /* Always or unset: Required (Jobs) */
} workload_rule;

static const char *const restart_always[] = {"Always", NULL};
static const char *const restart_job[] = {"OnFailure", "Never", NULL};

static const workload_rule workloads[] = {
    {"apps", "Deployment", "spec.selector", "spec.template", 1,
     "empty selector is invalid for deployment", restart_always, 0},
    {"apps", "ReplicaSet", "spec.selector", "spec.template", 1,
     "empty selector is invalid for deployment", restart_always, 0},
    {"apps", "StatefulSet", "spec.selector", "spec.template", 1,
     "empty selector is not valid for statefulset.", restart_always, 0},
    {"apps", "DaemonSet", "spec.selector", "spec.template", 0,
     "empty selector is invalid for daemonset", restart_always, 0},
    {"batch", "Job", "spec.selector", "spec.template", 1, NULL, restart_job, 1},
    {"batch", "CronJob", NULL, "spec.jobTemplate.spec.template", 0, NULL, restart_job, 1},
};

static void validate_workload(sk_field_errors *fe, const workload_rule *w, const json_t *obj)
{
    const json_t *tmpl = at(obj, w->template_at);
    sk_buf field = SK_BUF_INIT;
    if (w->selector_at) {
        const json_t *sel = at(obj, w->selector_at);
        if (!sel && w->selector_required) {
            sk_field_errors_required(fe, w->selector_at, "");
        } else if (sel && selector_empty(sel) && w->empty_selector) {
            sk_buf v = SK_BUF_INIT;
            go_label_selector(&v, sel);
            fe_invalid_rendered(fe, w->selector_at, v.data, w->empty_selector);
            sk_buf_free(&v);
        }
        sk_buf_printf(&field, "%s.metadata.labels", w->template_at);
        check_selector_matches(fe, sel, tmpl, field.data);
    }
    field.len = 0;
    sk_buf_printf(&field, "%s.spec", w->template_at);
    validate_pod_spec(fe, at(tmpl, "spec"), field.data);
    const char *policy =
        str_at(tmpl, "spec.restartPolicy") ? str_at(tmpl, "spec.restartPolicy") : "";
    int supported = 0;
    for (const char *const *p = w->restart_policies; *p; p++)
        supported |= strcmp(*p, policy) == 0;
    sk_buf_printf(&field, ".restartPolicy");
    if (w->restart_required && (!*policy || strcmp(policy, "Always") == 0))
        sk_field_errors_required(fe, field.data, "valid values: \"OnFailure\", \"Never\"");
    else if (!supported)
        fe_not_supported(fe, field.data, policy, w->restart_policies);
    sk_buf_free(&field);
}

/* ValidateImmutableField for a selector. */
static void immutable_selector(sk_field_errors *fe, const json_t *obj, const json_t *old,
                               const char *path)
{
    const json_t *a = at(obj, path), *b = at(old, path);
    if ((a || b) && !(a && b && json_equal(a, b))) {
        sk_buf v = SK_BUF_INIT;
        go_label_selector(&v, a);
        fe_invalid_rendered(fe, path, v.data, msg_field_immutable);
        sk_buf_free(&v);
    }
}

/* Two values equal as Go compares the typed fields (absent == null). */
static int same_value(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

static void validate_workload_update(sk_field_errors *fe, const sk_resource *r, const json_t *obj,
                                     const json_t *old)
{
    if (strcmp(r->kind, "Job") == 0) {
        immutable_selector(fe, obj, old, "spec.selector");
        /* A template's %#v is a Go struct dump no client parses; the
         * field and detail are what they act on. */
        if (!same_value(at(obj, "spec.template"), at(old, "spec.template")))
            fe_invalid_rendered(fe, "spec.template", "core.PodTemplateSpec{...}",
                                msg_field_immutable);
        return;
    }
    if (strcmp(r->kind, "StatefulSet") == 0) {
        json_t *a = json_deep_copy(at(obj, "spec")), *b = json_deep_copy(at(old, "spec"));
        static const char *const mutable_fields[] = {"replicas",
                                                     "template",
                                                     "updateStrategy",
                                                     "persistentVolumeClaimRetentionPolicy",
                                                     "minReadySeconds",
                                                     "ordinals",
                                                     "revisionHistoryLimit"};
        for (size_t i = 0; i < sizeof mutable_fields / sizeof mutable_fields[0]; i++) {
            json_object_del(a, mutable_fields[i]);
            json_object_del(b, mutable_fields[i]);
        }
        if (!same_value(a, b))
            sk_field_errors_forbidden(
                fe, "spec",
                "updates to statefulset spec for fields other than 'replicas', "
                "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                "forbidden");
        json_decref(a);
        json_decref(b);
        return;
    }
    /* apps/v1 Deployments, ReplicaSets and DaemonSets keep their selector. */
    immutable_selector(fe, obj, old, "spec.selector");
}

/* ValidatePodUpdate's spec check: old and new specs equal but for the
 * fields a pod may change (containers' images, activeDeadlineSeconds,
 * tolerations, terminationGracePeriodSeconds, scheduling gates removed,
 * ephemeral containers through their subresource). */
static void validate_pod_update(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    /* ephemeralContainers are pods/ephemeralcontainers' to change, and that
     * subresource's writes come through here too. */
    static const char *const mutable_fields[] = {"activeDeadlineSeconds", "tolerations",
                                                 "terminationGracePeriodSeconds", "schedulingGates",
                                                 "ephemeralContainers"};
    static const char *const lists[] = {"containers", "initContainers"};
    json_t *a = json_deep_copy(at(obj, "spec")), *b = json_deep_copy(at(old, "spec"));
    for (size_t i = 0; i < sizeof mutable_fields / sizeof mutable_fields[0]; i++) {
        json_object_del(a, mutable_fields[i]);
        json_object_del(b, mutable_fields[i]);
    }
    for (size_t l = 0; l < 2; l++) {
        json_t *ca = json_object_get(a, lists[l]), *cb = json_object_get(b, lists[l]), *c;
        size_t i;
        json_array_foreach(ca, i, c) json_object_del(c, "image");
        json_array_foreach(cb, i, c) json_object_del(c, "image");
    }
    if (!same_value(a, b))
        sk_field_errors_forbidden(fe, "spec", msg_pod_update);
    json_decref(a);
    json_decref(b);
}

void sk_go_string_slice(sk_buf *b, const json_t *list)
{
    size_t i;
    const json_t *v;
    if (!json_is_array(list)) {
        sk_buf_puts(b, "[]string(nil)");
        return;
    }
    sk_buf_puts(b, "[]string{");
    json_array_foreach(list, i, v)
    {
        if (i)
            sk_buf_puts(b, ", ");
        sk_buf_go_quoted(b, json_string_value(v) ? json_string_value(v) : "");
    }
    sk_buf_putc(b, '}');
}

static int headless(const json_t *ips)
{
    const char *ip = json_string_value(json_array_get(ips, 0));
    return json_array_size(ips) == 1 && ip && strcmp(ip, "None") == 0;
}

/* validateUpgradeDowngradeClusterIPs: an update may add or release the
 * secondary cluster IP, never change one (kube's service storage has made
 * clusterIPs follow a changed clusterIP by then); ExternalName on either
 * side and headless on both are exempt. The value is the new clusterIPs. */
static void validate_cluster_ips_update(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    const char *type = str_at(obj, "spec.type"), *old_type = str_at(old, "spec.type");
    const char *policy = str_at(obj, "spec.ipFamilyPolicy");
    const json_t *ips = at(obj, "spec.clusterIPs"), *old_ips = at(old, "spec.clusterIPs");
    size_t n = json_array_size(ips), old_n = json_array_size(old_ips);
    static const char changed[] = "may not change once set";
    if ((type && !strcmp(type, "ExternalName")) ||
        (old_type && !strcmp(old_type, "ExternalName")) || (headless(ips) && headless(old_ips)))
        return;
    sk_buf v = SK_BUF_INIT, field = SK_BUF_INIT;
    sk_go_string_slice(&v, json_array_size(ips) ? ips : NULL);
    const char *first = json_string_value(json_array_get(ips, 0));
    const char *old_first = json_string_value(json_array_get(old_ips, 0));
    int first_changed = n && old_n && (!first || !old_first || strcmp(first, old_first) != 0);
    if (n == old_n) {
        for (size_t i = 0; i < n; i++) {
            const char *a = json_string_value(json_array_get(ips, i));
            const char *b = json_string_value(json_array_get(old_ips, i));
            if (a && b && !strcmp(a, b))
                continue;
            sk_buf_reset(&field);
            sk_buf_printf(&field, "spec.clusterIPs[%zu]", i);
            fe_invalid_rendered(fe, field.data, v.data, changed);
        }
    } else if (old_n > n) {
        if (n == 0)
            fe_invalid_rendered(fe, "spec.clusterIPs[0]", v.data,
                                "primary clusterIP can not be unset");
        if (first_changed)
            fe_invalid_rendered(fe, "spec.clusterIPs[0]", v.data, changed);
        if (n == 1 && (!policy || strcmp(policy, "SingleStack") != 0)) {
            sk_buf p = SK_BUF_INIT;
            if (policy)
                sk_buf_go_quoted(&p, policy);
            else
                sk_buf_puts(&p, "null");
            fe_invalid_rendered(fe, "spec.ipFamilyPolicy", p.data,
                                "must be set to 'SingleStack' when releasing the secondary "
                                "clusterIP");
            sk_buf_free(&p);
        }
    } else if (first_changed) {
        fe_invalid_rendered(fe, "spec.clusterIPs[0]", v.data, changed);
    }
    sk_buf_free(&field);
    sk_buf_free(&v);
}

/* ValidateServiceUpdate's cluster IP checks, then ValidateService's first
 * checks: ports (unless headless or ExternalName), each port's number and,
 * with several, its name. */
static void validate_service(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    const char *type = str_at(obj, "spec.type") ? str_at(obj, "spec.type") : "";
    const char *ip = str_at(obj, "spec.clusterIP") ? str_at(obj, "spec.clusterIP") : "";
    const json_t *ports = at(obj, "spec.ports"), *p;
    size_t i;
    if (old)
        validate_cluster_ips_update(fe, obj, old);
    if (json_array_size(ports) == 0 && strcmp(ip, "None") != 0 && strcmp(type, "ExternalName") != 0)
        sk_field_errors_required(fe, "spec.ports", "");
    json_array_foreach(ports, i, p)
    {
        sk_buf field = SK_BUF_INIT;
        const char *name = str_at(p, "name");
        json_int_t port = json_integer_value(json_object_get(p, "port"));
        if (json_array_size(ports) > 1 && (!name || !*name)) {
            sk_buf_printf(&field, "spec.ports[%zu].name", i);
            sk_field_errors_required(fe, field.data, "");
        }
        if (port < 1 || port > 65535) {
            field.len = 0;
            sk_buf_printf(&field, "spec.ports[%zu].port", i);
            fe_invalid_int(fe, field.data, port, "must be between 1 and 65535, inclusive");
        }
        sk_buf_free(&field);
    }
}

/* A kind's metadata.name rule (upstream ValidateNameFunc per kind). */
/* ---- CustomResourceDefinition (apiextensions-apiserver validation) ------ */

/* IsDNS1035Label's messages joined by ",", as the CRD checks report them;
 * NULL if s is valid. New string. */
static char *dns1035_joined(const char *s)
{
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    size_t n = dns1035_msgs(s, msgs);
    if (n == 0)
        return NULL;
    sk_buf b = SK_BUF_INIT;
    for (size_t i = 0; i < n; i++)
        sk_buf_printf(&b, "%s%s", i ? "," : "", msgs[i]);
    return sk_buf_steal(&b, NULL);
}

/* field.Invalid(path, s, joined DNS-1035 messages [after prefix]) if s (lower-cased
 * when fold) is not a DNS-1035 label. */
static void crd_dns1035(sk_field_errors *fe, const char *path, const char *s, int fold,
                        const char *prefix)
{
    char *lower = strdup(s);
    SK_CHECK_ALLOC(lower);
    for (char *c = lower; fold && *c; c++)
        *c = (char)tolower((unsigned char)*c);
    char *msg = dns1035_joined(lower);
    if (msg) {
        sk_buf d = SK_BUF_INIT;
        sk_buf_printf(&d, "%s%s", prefix ? prefix : "", msg);
        sk_field_errors_invalid(fe, path, s, d.data);
        sk_buf_free(&d);
    }
    free(msg);
    free(lower);
}

/* ValidateCustomResourceDefinitionNames over names (spec.names or
 * status.acceptedNames) at path. */
static void validate_crd_names(sk_field_errors *fe, const json_t *names, const char *path)
{
    static const struct {
        const char *key;
        int fold;
    } single[] = {{"plural", 0}, {"singular", 0}, {"kind", 1}, {"listKind", 1}};
    char f[128];
    for (size_t i = 0; i < 4; i++) {
        const char *v = json_string_value(json_object_get(names, single[i].key));
        snprintf(f, sizeof f, "%s.%s", path, single[i].key);
        if (v && *v)
            crd_dns1035(fe, f, v, single[i].fold,
                        single[i].fold ? "may have mixed case, but should otherwise match: "
                                       : NULL);
    }
    size_t k;
    const json_t *s;
    json_array_foreach(json_object_get(names, "shortNames"), k, s)
    {
        snprintf(f, sizeof f, "%s.shortNames[%zu]", path, k);
        crd_dns1035(fe, f, json_string_value(s) ? json_string_value(s) : "", 0, NULL);
    }
    const char *kind = json_string_value(json_object_get(names, "kind"));
    const char *list_kind = json_string_value(json_object_get(names, "listKind"));
    if (kind && *kind && list_kind && strcmp(kind, list_kind) == 0) {
        snprintf(f, sizeof f, "%s.listKind", path);
        sk_field_errors_invalid(fe, f, list_kind, "kind and listKind may not be the same");
    }
    json_array_foreach(json_object_get(names, "categories"), k, s)
    {
        snprintf(f, sizeof f, "%s.categories[%zu]", path, k);
        crd_dns1035(fe, f, json_string_value(s) ? json_string_value(s) : "", 0, NULL);
    }
}

/* validateSimpleJSONPath; 0 if it reported an error. */
static int crd_simple_path(sk_field_errors *fe, const char *path, const char *s)
{
    if (!*s)
        sk_field_errors_invalid(fe, path, s, "must not be empty");
    else if (s[0] != '.')
        sk_field_errors_invalid(fe, path, s, "must be a simple json path starting with .");
    else
        return 1;
    return 0;
}

static void validate_crd_scale_path(sk_field_errors *fe, const json_t *scale, const char *key,
                                    const char *vpath, const char *under, const char *msg)
{
    char f[160];
    snprintf(f, sizeof f, "%s.scale.%s", vpath, key);
    const char *p = json_string_value(json_object_get(scale, key));
    if (!p || !*p) {
        if (strcmp(key, "labelSelectorPath") != 0)
            sk_field_errors_required(fe, f, "");
        return;
    }
    if (!crd_simple_path(fe, f, p))
        return;
    int ok = strncmp(p, under, strlen(under)) == 0 ||
             (strcmp(key, "labelSelectorPath") == 0 && strncmp(p, ".status.", 8) == 0);
    if (!ok) {
        if (strcmp(key, "labelSelectorPath") == 0) {
            /* kube reports the *string pointer itself: %#v prints an address. */
            sk_buf v = SK_BUF_INIT;
            sk_buf_puts(&v, "(*string)(...)");
            fe_invalid_rendered(fe, f, v.data, msg);
            sk_buf_free(&v);
        } else {
            sk_field_errors_invalid(fe, f, p, msg);
        }
    }
}

static void validate_crd_version(sk_field_errors *fe, const json_t *v, const char *vpath)
{
    static const char *const types[] = {"boolean", "date", "integer", "number", "string", NULL};
    static const char *const formats[] = {"byte",  "date",  "date-time", "double", "float",
                                          "int32", "int64", "password",  "",       NULL};
    char f[192];
    const json_t *schema = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
    const json_t *subs = json_object_get(v, "subresources");
    if (!schema) {
        snprintf(f, sizeof f, "%s.schema.openAPIV3Schema", vpath);
        sk_field_errors_required(fe, f, "schemas are required");
    } else {
        const char *type = json_string_value(json_object_get(schema, "type"));
        if (json_object_get(subs, "status") && type && *type && strcmp(type, "object") != 0) {
            snprintf(f, sizeof f, "%s.schema.openAPIV3Schema.type", vpath);
            sk_field_errors_invalid(fe, f, type,
                                    "only \"object\" is allowed as the type at the root of the "
                                    "schema if the status subresource is enabled");
        }
        if (json_is_true(json_object_get(schema, "nullable"))) {
            snprintf(f, sizeof f, "%s.schema.openAPIV3Schema.nullable", vpath);
            sk_field_errors_forbidden(fe, f, "nullable cannot be true at the root");
        }
    }
    const json_t *scale = json_object_get(subs, "scale");
    if (scale) {
        snprintf(f, sizeof f, "%s.subresources", vpath);
        validate_crd_scale_path(fe, scale, "specReplicasPath", f, ".spec.",
                                "should be a json path under .spec");
        validate_crd_scale_path(fe, scale, "statusReplicasPath", f, ".status.",
                                "should be a json path under .status");
        validate_crd_scale_path(fe, scale, "labelSelectorPath", f, ".spec.",
                                "should be a json path under either .spec or .status");
    }
    size_t i;
    const json_t *col;
    json_array_foreach(json_object_get(v, "additionalPrinterColumns"), i, col)
    {
        const char *name = json_string_value(json_object_get(col, "name"));
        const char *type = json_string_value(json_object_get(col, "type"));
        const char *format = json_string_value(json_object_get(col, "format"));
        const char *jp = json_string_value(json_object_get(col, "jsonPath"));
        const char *one_of = "must be one of boolean,date,integer,number,string";
        snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].name", vpath, i);
        if (!name || !*name)
            sk_field_errors_required(fe, f, "");
        snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].type", vpath, i);
        size_t k = 0;
        while (type && *type && types[k] && strcmp(types[k], type) != 0)
            k++;
        if (!type || !*type)
            sk_field_errors_required(fe, f, one_of);
        else if (!types[k])
            sk_field_errors_invalid(fe, f, type, one_of);
        snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].format", vpath, i);
        for (k = 0; format && *format && formats[k] && strcmp(formats[k], format) != 0;)
            k++;
        if (format && *format && !formats[k])
            sk_field_errors_invalid(fe, f, format,
                                    "must be one of byte,date,date-time,double,float,int32,int64,"
                                    "password");
        snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].JSONPath", vpath, i);
        if (!jp || !*jp)
            sk_field_errors_required(fe, f, "");
        else
            crd_simple_path(fe, f, jp);
    }
}

/* ValidateCustomResourceDefinition (create) and its update checks, for the
 * v1 API: per-version schemas, subresources and columns (v1 has no
 * top-level ones). The structural-schema rules of openAPIV3Schema itself
 * are kube/structural's. */
static void validate_crd(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    static const char *const scopes[] = {"Cluster", "Namespaced", NULL};
    static const char *const strategies[] = {"None", "Webhook", NULL};
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    const char *name = str_at(obj, "metadata.name");
    const char *group = str_at(obj, "spec.group") ? str_at(obj, "spec.group") : "";
    const char *plural = str_at(obj, "spec.names.plural") ? str_at(obj, "spec.names.plural") : "";
    char f[128];
    /* ObjectMeta with kube's name function: a subdomain that is plural.group. */
    validate_meta(fe, obj, 0, NAME_SUBDOMAIN, 1);
    if (name && *name) {
        sk_buf want = SK_BUF_INIT;
        sk_buf_printf(&want, "%s.%s", plural, group);
        if (strcmp(name, want.data) != 0)
            sk_field_errors_invalid(fe, "metadata.name", name,
                                    "must be spec.names.plural+\".\"+spec.group");
        sk_buf_free(&want);
    }
    if (!*group) {
        sk_field_errors_required(fe, "spec.group", "");
    } else if (subdomain_msgs(group, strlen(group), 0, msgs) > 0) {
        size_t n = subdomain_msgs(group, strlen(group), 0, msgs);
        sk_buf d = SK_BUF_INIT;
        for (size_t i = 0; i < n; i++)
            sk_buf_printf(&d, "%s%s", i ? "," : "", msgs[i]);
        sk_field_errors_invalid(fe, "spec.group", group, d.data);
        sk_buf_free(&d);
    } else if (!strchr(group, '.')) {
        sk_field_errors_invalid(fe, "spec.group", group,
                                "should be a domain with at least one dot");
    }
    const char *scope = str_at(obj, "spec.scope") ? str_at(obj, "spec.scope") : "";
    if (!*scope)
        sk_field_errors_required(fe, "spec.scope", "");
    else if (strcmp(scope, "Cluster") != 0 && strcmp(scope, "Namespaced") != 0)
        fe_not_supported(fe, "spec.scope", scope, scopes);
    const json_t *versions = at(obj, "spec.versions");
    size_t i, storage = 0, unique = 1;
    const json_t *v;
    json_array_foreach(versions, i, v)
    {
        const char *vn = json_string_value(json_object_get(v, "name"));
        vn = vn ? vn : "";
        if (json_is_true(json_object_get(v, "storage")))
            storage++;
        for (size_t k = 0; k < i; k++)
            if (strcmp(vn, json_string_value(json_object_get(json_array_get(versions, k), "name"))
                               ?: "") == 0)
                unique = 0;
        snprintf(f, sizeof f, "spec.versions[%zu].name", i);
        crd_dns1035(fe, f, vn, 0, NULL);
        snprintf(f, sizeof f, "spec.versions[%zu]", i);
        validate_crd_version(fe, v, f);
    }
    /* kube prints the versions with %#v; the element type names them here. */
    if (!unique)
        fe_invalid_rendered(fe, "spec.versions",
                            "[]apiextensions.CustomResourceDefinitionVersion{...}",
                            "must contain unique version names");
    if (storage != 1)
        fe_invalid_rendered(fe, "spec.versions",
                            json_array_size(versions)
                                ? "[]apiextensions.CustomResourceDefinitionVersion{...}"
                                : "[]apiextensions.CustomResourceDefinitionVersion(nil)",
                            "must have exactly one version marked as storage version");
    static const char *const required_names[] = {"plural", "singular", "kind", "listKind"};
    for (size_t k = 0; k < 4; k++) {
        snprintf(f, sizeof f, "spec.names.%s", required_names[k]);
        const char *s = str_at(obj, f);
        if (!s || !*s)
            sk_field_errors_required(fe, f, "");
    }
    validate_crd_names(fe, at(obj, "spec.names"), "spec.names");
    const char *strategy = str_at(obj, "spec.conversion.strategy");
    if (at(obj, "spec.conversion")) {
        if (!strategy || !*strategy)
            sk_field_errors_required(fe, "spec.conversion.strategy", "");
        else if (strcmp(strategy, "None") != 0 && strcmp(strategy, "Webhook") != 0)
            fe_not_supported(fe, "spec.conversion.strategy", strategy, strategies);
        if (strategy && strcmp(strategy, "Webhook") == 0) {
            if (!at(obj, "spec.conversion.webhook.clientConfig"))
                sk_field_errors_required(fe, "spec.conversion.webhookClientConfig",
                                         "required when strategy is set to Webhook");
        } else if (at(obj, "spec.conversion.webhook")) {
            sk_field_errors_forbidden(fe, "spec.conversion.webhookClientConfig",
                                      "should not be set when strategy is not set to Webhook");
        }
    }
    validate_crd_names(fe, at(obj, "status.acceptedNames"), "status.acceptedNames");
    /* ValidateCustomResourceDefinitionStoredVersions */
    const json_t *stored = at(obj, "status.storedVersions");
    if (json_array_size(stored) == 0) {
        sk_buf b = SK_BUF_INIT;
        sk_go_string_slice(&b, json_array_size(stored) ? stored : NULL);
        fe_invalid_rendered(fe, "status.storedVersions", b.data,
                            "must have at least one stored version");
        sk_buf_free(&b);
    } else {
        json_array_foreach(versions, i, v)
        {
            const char *vn = json_string_value(json_object_get(v, "name"));
            size_t k;
            const json_t *s;
            int found = 0;
            json_array_foreach(stored, k, s) found |=
                vn && json_string_value(s) && strcmp(vn, json_string_value(s)) == 0;
            if (json_is_true(json_object_get(v, "storage")) && !found) {
                sk_buf b = SK_BUF_INIT, d = SK_BUF_INIT;
                sk_go_string_slice(&b, json_array_size(stored) ? stored : NULL);
                sk_buf_printf(&d, "must have the storage version %s", vn ? vn : "");
                fe_invalid_rendered(fe, "status.storedVersions", b.data, d.data);
                sk_buf_free(&b);
                sk_buf_free(&d);
            }
        }
        const json_t *s;
        json_array_foreach(stored, i, s)
        {
            size_t k;
            int found = 0;
            json_array_foreach(versions, k, v) found |=
                json_string_value(s) &&
                strcmp(json_string_value(s), json_string_value(json_object_get(v, "name")) ?: "") ==
                    0;
            if (!found) {
                snprintf(f, sizeof f, "status.storedVersions[%zu]", i);
                sk_field_errors_invalid(fe, f, json_string_value(s) ?: "",
                                        "must appear in spec.versions");
            }
        }
    }
    if (!old)
        return;
    /* The names that key storage never change; scope and kind once Established. */
    static const char *const always[] = {"spec.group", "spec.names.plural"};
    static const char *const established[] = {"spec.scope", "spec.names.kind"};
    int is_established = 0;
    json_array_foreach(at(old, "status.conditions"), i, v) is_established |=
        strcmp(json_string_value(json_object_get(v, "type")) ?: "", "Established") == 0 &&
        strcmp(json_string_value(json_object_get(v, "status")) ?: "", "True") == 0;
    for (size_t k = 0; k < 4; k++) {
        const char *path = k < 2 ? established[k] : always[k - 2];
        if (k < 2 && !is_established)
            continue;
        const char *a = str_at(obj, path) ?: "", *b = str_at(old, path) ?: "";
        if (strcmp(a, b) != 0)
            sk_field_errors_invalid(fe, path, a, msg_field_immutable);
    }
}

static name_rule name_rule_of(const sk_resource *r)
{
    static const char *const path_segment_kinds[] = {"Role", "ClusterRole", "RoleBinding",
                                                     "ClusterRoleBinding"};
    if (!*r->group && strcmp(r->kind, "Service") == 0)
        return NAME_DNS1035;
    if (!*r->group && strcmp(r->kind, "Namespace") == 0)
        return NAME_LABEL;
    if (strcmp(r->group, "rbac.authorization.k8s.io") == 0)
        for (size_t i = 0; i < sizeof path_segment_kinds / sizeof path_segment_kinds[0]; i++)
            if (strcmp(r->kind, path_segment_kinds[i]) == 0)
                return NAME_PATH_SEGMENT;
    return NAME_SUBDOMAIN;
}

/* ValidateEventCreate for requests in events.k8s.io/v1: the first checks
 * (ObjectMeta, an eventTime, a known type). */
static void validate_event_v1(sk_field_errors *fe, const json_t *obj)
{
    const char *type = str_at(obj, "type") ? str_at(obj, "type") : "";
    validate_meta(fe, obj, 1, NAME_SUBDOMAIN, 1);
    if (!at(obj, "eventTime"))
        sk_field_errors_required(fe, "eventTime", "");
    if (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0) {
        sk_buf d = SK_BUF_INIT;
        sk_buf_printf(&d, "has invalid value: %s", type);
        sk_field_errors_invalid(fe, "type", "", d.data);
        sk_buf_free(&d);
    }
}

/* ---- admissionregistration/v1 webhook configurations ---- */
/* The fields this server acts on, as admissionregistration's validation
 * checks them. */

/* One compiler (cel/admission.h) for one object's admission expressions,
 * in the arena that holds them. */
typedef struct adm_ctx {
    sk_arena *a;
    sk_cel_adm *adm;
} adm_ctx;

/* 1 if one of items (an array of objects, NULL for none) has expr as its
 * key field. */
static int stored_in(const json_t *items, const char *key, const char *expr)
{
    size_t i;
    json_t *v;
    json_array_foreach(items, i, v)
    {
        const char *s = json_string_value(json_object_get(v, key));
        if (s && strcmp(s, expr) == 0)
            return 1;
    }
    return 0;
}

/* validateCELCondition: expr compiled with decl's variables declared
 * (variable: the name it composes, NULL for none); kube's field.Invalid
 * with value and the compiler's detail when it does not. */
static void check_expression(sk_field_errors *fe, adm_ctx *x, const char *field, const char *expr,
                             const char *value, unsigned decl, int stored, sk_cel_adm_result result,
                             const char *variable)
{
    sk_buf detail = SK_BUF_INIT;
    if (!sk_cel_adm_compile(x->adm, sk_arena_strdup(x->a, expr), decl, stored, result, variable,
                            &detail))
        sk_field_errors_invalid(fe, field, value, detail.data);
    sk_buf_free(&detail);
}

/* validateMatchConditions: at most 64, each with a qualified name of its
 * own and an expression (trimmed, as kube compiles and quotes it) that
 * compiles to a bool; old_conds: the stored object's conditions. */
static void check_match_conditions(sk_field_errors *fe, adm_ctx *x, const char *base,
                                   const json_t *conds, const json_t *old_conds, unsigned decl)
{
    char field[160];
    size_t n = json_array_size(conds);
    snprintf(field, sizeof field, "%s.matchConditions", base);
    if (n > 64)
        sk_field_errors_too_many(fe, field, (long)n, 64);
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(conds, i);
        const char *expr = json_string_value(json_object_get(c, "expression"));
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *t = sk_arena_trim(x->a, expr ? expr : "");
        snprintf(field, sizeof field, "%s.matchConditions[%zu].expression", base, i);
        if (!*t)
            sk_field_errors_required(fe, field, NULL);
        else
            check_expression(fe, x, field, t, t, decl | SK_CEL_ADM_AUTHORIZER,
                             stored_in(old_conds, "expression", t), SK_CEL_ADM_BOOL, NULL);
        snprintf(field, sizeof field, "%s.matchConditions[%zu].name", base, i);
        if (!name || !*name) {
            sk_field_errors_required(fe, field, NULL);
        } else {
            const char *msgs[SK_VALIDATE_MAX_MSGS];
            invalid_each(fe, field, name, msgs, sk_validate_qualified_name(name, msgs));
            for (size_t j = 0; j < i; j++) {
                const char *other =
                    json_string_value(json_object_get(json_array_get(conds, j), "name"));
                if (other && strcmp(other, name) == 0) {
                    sk_field_errors_duplicate(fe, field, json_object_get(c, "name"));
                    break;
                }
            }
        }
    }
}

/* reflect.DeepEqual of two optional fields. */
static int same_field(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

static int has_string(const json_t *list, const char *want)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) if (json_is_string(v) &&
                                       strcmp(json_string_value(v), want) == 0) return 1;
    return 0;
}

/* An optional (or required) enum field: field.Required when absent,
 * field.NotSupported (fe_not_supported) for a value not in allowed
 * (NULL-ended). */
static void check_enum(sk_field_errors *fe, const char *field, const json_t *v,
                       const char *const *allowed, int required)
{
    if (!v || json_is_null(v)) {
        if (required)
            sk_field_errors_required(fe, field, NULL);
        return;
    }
    const char *s = json_string_value(v);
    for (size_t i = 0; s && allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0)
            return;
    fe_not_supported(fe, field, s ? s : "", allowed);
}

static void check_url(sk_field_errors *fe, const char *field, const char *url)
{
    const char *detail = NULL;
    const char *rest = strstr(url, "://");
    if (strncmp(url, "https://", 8) != 0)
        detail = "'https' is the only allowed URL scheme";
    else if (!rest[3] || rest[3] == '/')
        detail = "host must be specified";
    else if (strchr(url, '#'))
        detail = "fragments are not permitted";
    else if (strchr(url, '?'))
        detail = "query parameters are not permitted";
    else if (strchr(rest + 3, '@') &&
             strchr(rest + 3, '@') <
                 (strchr(rest + 3, '/') ? strchr(rest + 3, '/') : url + strlen(url)))
        detail = "user information is not permitted in the URL";
    if (detail)
        sk_field_errors_invalid(fe, field, url, detail);
}

static void check_client_config(sk_field_errors *fe, const char *base, const json_t *cc)
{
    char field[128];
    const json_t *url = json_object_get(cc, "url");
    const json_t *svc = json_object_get(cc, "service");
    int has_url = json_is_string(url), has_svc = json_is_object(svc);
    if (has_url == has_svc) {
        snprintf(field, sizeof field, "%s.clientConfig", base);
        sk_field_errors_required(fe, field, "exactly one of url or service is required");
    } else if (has_url) {
        snprintf(field, sizeof field, "%s.clientConfig.url", base);
        check_url(fe, field, json_string_value(url));
    } else {
        const char *name = json_string_value(json_object_get(svc, "name"));
        const char *ns = json_string_value(json_object_get(svc, "namespace"));
        const json_t *port = json_object_get(svc, "port");
        const char *path = json_string_value(json_object_get(svc, "path"));
        snprintf(field, sizeof field, "%s.clientConfig.service.name", base);
        if (!name || !*name)
            sk_field_errors_required(fe, field, "service name is required");
        snprintf(field, sizeof field, "%s.clientConfig.service.namespace", base);
        if (!ns || !*ns)
            sk_field_errors_required(fe, field, "service namespace is required");
        snprintf(field, sizeof field, "%s.clientConfig.service.port", base);
        if (json_is_integer(port) &&
            (json_integer_value(port) < 1 || json_integer_value(port) > 65535))
            sk_field_errors_invalid_json(fe, field, port,
                                         "port is not valid: must be between 1 and 65535, "
                                         "inclusive");
        snprintf(field, sizeof field, "%s.clientConfig.service.path", base);
        if (path && strcmp(path, "//") == 0)
            sk_field_errors_invalid(fe, field, path, "segment[0] may not be empty");
        else if (path && *path && path[0] != '/')
            sk_field_errors_invalid(fe, field, path, "must start with a '/'");
    }
}

/* ignoreValidatingWebhookMatchConditions: an update that leaves every
 * webhook's matchConditions as they were does not check them again. */
static int same_match_conditions(const json_t *hooks, const json_t *old_hooks)
{
    if (json_array_size(hooks) != json_array_size(old_hooks))
        return 0;
    for (size_t i = 0; i < json_array_size(hooks); i++)
        if (!same_field(json_object_get(json_array_get(hooks, i), "matchConditions"),
                        json_object_get(json_array_get(old_hooks, i), "matchConditions")))
            return 0;
    return 1;
}

static void validate_webhook_config(sk_field_errors *fe, const json_t *obj, const json_t *old,
                                    int mutating)
{
    static const char *const failure[] = {"Fail", "Ignore", NULL};
    static const char *const side[] = {"None", "NoneOnDryRun", NULL};
    static const char *const match[] = {"Equivalent", "Exact", NULL};
    static const char *const reinvoke[] = {"IfNeeded", "Never", NULL};
    const json_t *hooks = json_object_get(obj, "webhooks");
    const json_t *old_hooks = old ? json_object_get(old, "webhooks") : NULL;
    int ignore_conditions = old && same_match_conditions(hooks, old_hooks);
    /* findValidatingPreexistingExpressions: every stored webhook's */
    json_t *old_conds = json_array();
    size_t i;
    json_t *h;
    json_array_foreach(old_hooks, i, h)
        json_array_extend(old_conds, json_object_get(h, "matchConditions"));
    adm_ctx x = {sk_arena_new(), NULL};
    x.adm = sk_cel_adm_new(x.a);
    json_array_foreach(hooks, i, h)
    {
        char base[64], field[128];
        snprintf(base, sizeof base, "webhooks[%zu]", i);
        const char *name = json_string_value(json_object_get(h, "name"));
        snprintf(field, sizeof field, "%s.name", base);
        if (!name || !*name) {
            sk_field_errors_required(fe, field, NULL);
        } else {
            for (size_t j = 0; j < i; j++) {
                const char *other =
                    json_string_value(json_object_get(json_array_get(hooks, j), "name"));
                if (other && strcmp(other, name) == 0) {
                    sk_field_errors_duplicate(fe, field, json_object_get(h, "name"));
                    break;
                }
            }
        }
        snprintf(field, sizeof field, "%s.failurePolicy", base);
        check_enum(fe, field, json_object_get(h, "failurePolicy"), failure, 0);
        snprintf(field, sizeof field, "%s.sideEffects", base);
        check_enum(fe, field, json_object_get(h, "sideEffects"), side, 1);
        snprintf(field, sizeof field, "%s.matchPolicy", base);
        check_enum(fe, field, json_object_get(h, "matchPolicy"), match, 0);
        if (mutating) {
            snprintf(field, sizeof field, "%s.reinvocationPolicy", base);
            check_enum(fe, field, json_object_get(h, "reinvocationPolicy"), reinvoke, 0);
        }
        const json_t *t = json_object_get(h, "timeoutSeconds");
        snprintf(field, sizeof field, "%s.timeoutSeconds", base);
        if (json_is_integer(t) && (json_integer_value(t) < 1 || json_integer_value(t) > 30))
            sk_field_errors_invalid_json(fe, field, t,
                                         "the timeout value must be between 1 and 30 seconds");
        const json_t *versions = json_object_get(h, "admissionReviewVersions");
        snprintf(field, sizeof field, "%s.admissionReviewVersions", base);
        if (json_array_size(versions) == 0) {
            sk_field_errors_required(fe, field, "must specify one of v1, v1beta1");
        } else if (!has_string(versions, "v1") && !has_string(versions, "v1beta1")) {
            sk_field_errors_invalid_json(fe, field, versions,
                                         "must include at least one of v1, v1beta1");
        }
        check_client_config(fe, base, json_object_get(h, "clientConfig"));
        if (!ignore_conditions)
            check_match_conditions(fe, &x, base, json_object_get(h, "matchConditions"), old_conds,
                                   0);
    }
    json_decref(old_conds);
    sk_arena_free(x.a);
}

/* ---- ValidatingAdmissionPolicy and its binding ---- */

/* isCELIdentifier: [_a-zA-Z][_a-zA-Z0-9]* and not a reserved word. */
static int is_cel_identifier(const char *s)
{
    static const char *const reserved[] = {
        "true",     "false",     "null",   "in",     "as",      "break", "const",
        "continue", "else",      "for",    "function", "if",    "import", "let",
        "loop",     "package",   "namespace", "return", "var",  "void",  "while"};
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(s, reserved[i]) == 0)
            return 0;
    return 1;
}

static int blank(const char *s)
{
    while (s && *s && isspace((unsigned char)*s))
        s++;
    return !s || !*s;
}

/* validateMatchResources: the fields this server acts on. */
static void check_match_resources(sk_field_errors *fe, const char *base, const json_t *mr)
{
    static const char *const match[] = {"Equivalent", "Exact", NULL};
    char field[128];
    snprintf(field, sizeof field, "%s.matchPolicy", base);
    check_enum(fe, field, json_object_get(mr, "matchPolicy"), match, 1);
}

/* validateValidation; old_spec: the stored policy's spec (NULL on create),
 * whose expressions compile in the stored environment. */
static void check_validation(sk_field_errors *fe, adm_ctx *x, const char *base, const json_t *v,
                             const json_t *old_spec, unsigned decl)
{
    static const char *const reasons[] = {"Forbidden", "Invalid", "RequestEntityTooLarge",
                                          "Unauthorized", NULL};
    const json_t *old_vals = json_object_get(old_spec, "validations");
    char field[192];
    const char *expr = json_string_value(json_object_get(v, "expression"));
    const char *msg = json_string_value(json_object_get(v, "message"));
    const char *mexpr = json_string_value(json_object_get(v, "messageExpression"));
    snprintf(field, sizeof field, "%s.expression", base);
    if (blank(expr))
        sk_field_errors_required(fe, field, "expression is not specified");
    else
        check_expression(fe, x, field, expr, expr, decl, stored_in(old_vals, "expression", expr),
                         SK_CEL_ADM_BOOL, NULL);
    snprintf(field, sizeof field, "%s.messageExpression", base);
    if (mexpr && *mexpr && blank(mexpr))
        sk_field_errors_invalid(fe, field, mexpr, "must be non-empty if specified");
    else if (mexpr && *mexpr)
        check_expression(fe, x, field, mexpr, mexpr, decl & ~SK_CEL_ADM_AUTHORIZER,
                         stored_in(old_vals, "messageExpression", mexpr), SK_CEL_ADM_STRING, NULL);
    snprintf(field, sizeof field, "%s.message", base);
    if (msg && *msg && blank(msg))
        sk_field_errors_invalid(fe, field, msg, "message must be non-empty if specified");
    else if (msg && strpbrk(msg, "\r\n"))
        sk_field_errors_invalid(fe, field, msg, "message must not contain line breaks");
    snprintf(field, sizeof field, "%s.reason", base);
    check_enum(fe, field, json_object_get(v, "reason"), reasons, 0);
}

/* validateAuditAnnotation; old_spec as for check_validation. */
static void check_audit_annotation(sk_field_errors *fe, adm_ctx *x, size_t i, const json_t *anns,
                                   const char *name, const json_t *old_spec, unsigned decl)
{
    const json_t *v = json_array_get(anns, i);
    const char *key = json_string_value(json_object_get(v, "key"));
    const char *vexpr = json_string_value(json_object_get(v, "valueExpression"));
    const char *t = sk_arena_trim(x->a, vexpr ? vexpr : "");
    char field[128];
    snprintf(field, sizeof field, "spec.auditAnnotations[%zu].key", i);
    if (name && *name) {
        sk_buf q = SK_BUF_INIT;
        sk_buf_printf(&q, "%s/%s", name, key ? key : "");
        const char *msgs[SK_VALIDATE_MAX_MSGS];
        invalid_each(fe, field, q.data, msgs, sk_validate_qualified_name(q.data, msgs));
        sk_buf_free(&q);
    } else {
        sk_field_errors_invalid(fe, field, key ? key : "", "requires metadata.name be non-empty");
    }
    snprintf(field, sizeof field, "spec.auditAnnotations[%zu].valueExpression", i);
    /* compiled trimmed, quoted as written */
    if (!*t)
        sk_field_errors_required(fe, field, "valueExpression is not specified");
    else if (strlen(t) > 5 * 1024)
        sk_field_errors_required(fe, field, "must not exceed 5120 bytes in length");
    else
        check_expression(
            fe, x, field, t, vexpr, decl,
            stored_in(json_object_get(old_spec, "auditAnnotations"), "valueExpression", vexpr),
            SK_CEL_ADM_STRING_OR_NULL, NULL);
    snprintf(field, sizeof field, "spec.auditAnnotations[%zu].key", i);
    for (size_t j = 0; j < i; j++) {
        const char *other = json_string_value(json_object_get(json_array_get(anns, j), "key"));
        if (other && key && strcmp(other, key) == 0) {
            sk_field_errors_duplicate(fe, field, json_object_get(v, "key"));
            break;
        }
    }
}

/* validateValidatingAdmissionPolicySpec; old: the stored policy on an
 * update (its expressions compile in the stored environment; its
 * matchConditions, with paramKind unchanged, are not checked again). */
static void validate_admission_policy(sk_field_errors *fe, const json_t *obj, const json_t *old)
{
    static const char *const failure[] = {"Fail", "Ignore", NULL};
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *old_spec = old ? json_object_get(old, "spec") : NULL;
    const json_t *pk = json_object_get(spec, "paramKind");
    const json_t *mc = json_object_get(spec, "matchConstraints");
    const json_t *conds = json_object_get(spec, "matchConditions");
    const json_t *vars = json_object_get(spec, "variables");
    const json_t *vals = json_object_get(spec, "validations");
    const json_t *anns = json_object_get(spec, "auditAnnotations");
    const char *name = str_at(obj, "metadata.name");
    /* the policy's compiler composes variables when it has some */
    unsigned decl = SK_CEL_ADM_AUTHORIZER | (pk ? SK_CEL_ADM_PARAMS : 0) |
                    (json_array_size(vars) ? SK_CEL_ADM_VARIABLES : 0);
    adm_ctx x = {sk_arena_new(), NULL};
    x.adm = sk_cel_adm_new(x.a);
    char field[128];
    size_t i;
    json_t *v;
    check_enum(fe, "spec.failurePolicy", json_object_get(spec, "failurePolicy"), failure, 1);
    if (pk) {
        if (blank(json_string_value(json_object_get(pk, "apiVersion"))))
            sk_field_errors_required(fe, "spec.paramKind.apiVersion", NULL);
        if (blank(json_string_value(json_object_get(pk, "kind"))))
            sk_field_errors_required(fe, "spec.paramKind.kind", NULL);
    }
    if (!mc) {
        sk_field_errors_required(fe, "spec.matchConstraints", NULL);
    } else {
        check_match_resources(fe, "spec.matchConstraints", mc);
        /* at least one resourceRule, to give the expressions a type */
        if (json_array_size(json_object_get(mc, "resourceRules")) == 0)
            sk_field_errors_required(fe, "spec.matchConstraints.resourceRules", NULL);
    }
    if (!old_spec || !same_field(pk, json_object_get(old_spec, "paramKind")) ||
        !same_field(conds, json_object_get(old_spec, "matchConditions")))
        check_match_conditions(fe, &x, "spec", conds, json_object_get(old_spec, "matchConditions"),
                               pk ? SK_CEL_ADM_PARAMS : 0);
    json_array_foreach(vars, i, v)
    {
        const char *vname = json_string_value(json_object_get(v, "name"));
        const char *vexpr = json_string_value(json_object_get(v, "expression"));
        snprintf(field, sizeof field, "spec.variables[%zu].name", i);
        if (blank(vname))
            sk_field_errors_required(fe, field, "name is not specified");
        else if (!is_cel_identifier(vname))
            sk_field_errors_invalid(fe, field, vname, "name is not a valid CEL identifier");
        snprintf(field, sizeof field, "spec.variables[%zu].expression", i);
        /* kube looks a variable up among the stored validations */
        if (blank(vexpr))
            sk_field_errors_required(fe, field, "expression is not specified");
        else
            check_expression(
                fe, &x, field, vexpr, vexpr, decl,
                stored_in(json_object_get(old_spec, "validations"), "expression", vexpr),
                SK_CEL_ADM_ANY, vname ? vname : "");
    }
    if (json_array_size(vals) == 0 && json_array_size(anns) == 0) {
        const char *d = "validations or auditAnnotations must contain at least one item";
        sk_field_errors_required(fe, "spec.validations", d);
        sk_field_errors_required(fe, "spec.auditAnnotations", d);
        goto out;
    }
    json_array_foreach(vals, i, v)
    {
        char base[64];
        snprintf(base, sizeof base, "spec.validations[%zu]", i);
        check_validation(fe, &x, base, v, old_spec, decl);
    }
    if (json_array_size(anns) > 20)
        sk_field_errors_invalid_json(fe, "spec.auditAnnotations", anns,
                                     "must not have more than 20 auditAnnotations");
    for (i = 0; i < json_array_size(anns); i++)
        check_audit_annotation(fe, &x, i, anns, name, old_spec, decl);
out:
    sk_arena_free(x.a);
}

static void validate_admission_policy_binding(sk_field_errors *fe, const json_t *obj)
{
    static const char *const actions[] = {"Audit", "Deny", "Warn", NULL};
    static const char *const not_found[] = {"Deny", "Allow", NULL};
    const json_t *spec = json_object_get(obj, "spec");
    const char *policy = json_string_value(json_object_get(spec, "policyName"));
    const json_t *pr = json_object_get(spec, "paramRef");
    const json_t *va = json_object_get(spec, "validationActions");
    const char *bad;
    if (!policy || !*policy)
        sk_field_errors_required(fe, "spec.policyName", NULL);
    else if ((bad = sk_validate_dns1123_subdomain(policy)) != NULL)
        sk_field_errors_invalid(fe, "spec.policyName", policy, bad);
    if (pr) {
        const char *pname = json_string_value(json_object_get(pr, "name"));
        const json_t *sel = json_object_get(pr, "selector");
        int has_name = pname && *pname, has_sel = sel && !json_is_null(sel);
        if (has_name && has_sel) {
            sk_field_errors_forbidden(fe, "spec.paramRef.name",
                                      "name and selector are mutually exclusive");
            sk_field_errors_forbidden(fe, "spec.paramRef.selector",
                                      "name and selector are mutually exclusive");
        }
        if (!has_name && !has_sel)
            sk_field_errors_required(fe, "spec.paramRef", "one of name or selector must be specified");
        const json_t *pnf = json_object_get(pr, "parameterNotFoundAction");
        if (!json_string_length(pnf))
            sk_field_errors_required(fe, "spec.paramRef.parameterNotFoundAction", NULL);
        else
            check_enum(fe, "spec.paramRef.parameterNotFoundAction", pnf, not_found, 1);
    }
    if (json_object_get(spec, "matchResources"))
        check_match_resources(fe, "spec.matchResources", json_object_get(spec, "matchResources"));
    size_t i;
    json_t *v;
    int deny = 0, warn = 0;
    json_array_foreach(va, i, v)
    {
        char field[64];
        snprintf(field, sizeof field, "spec.validationActions[%zu]", i);
        check_enum(fe, field, v, actions, 1);
        for (size_t j = 0; j < i; j++)
            if (json_equal(json_array_get(va, j), v)) {
                sk_field_errors_duplicate(fe, field, v);
                break;
            }
        deny |= json_is_string(v) && strcmp(json_string_value(v), "Deny") == 0;
        warn |= json_is_string(v) && strcmp(json_string_value(v), "Warn") == 0;
    }
    if (deny && warn)
        sk_field_errors_invalid_json(fe, "spec.validationActions", va,
                                     "must not contain both Deny and Warn (repeating the same "
                                     "validation failure information in the API response and "
                                     "headers serves no purpose)");
    if (json_array_size(va) == 0)
        sk_field_errors_required(fe, "spec.validationActions",
                                 "at least one validation action is required");
}

static void validate_kind(const sk_resource *r, sk_field_errors *fe, const json_t *obj,
                          const json_t *old)
{
    if (old)
        validate_no_new_finalizers(fe, obj, old);
    if (strcmp(r->kind, "ConfigMap") == 0) {
        validate_configmap(fe, obj, old);
    } else if (strcmp(r->kind, "Secret") == 0) {
        validate_secret(fe, obj, old);
    } else if (strcmp(r->kind, "Namespace") == 0) {
        validate_namespace(fe, obj);
    } else if (strcmp(r->kind, "Lease") == 0) {
        validate_lease(fe, obj);
    } else if (strcmp(r->storage, "customresourcedefinitions.apiextensions.k8s.io") == 0) {
        validate_crd(fe, obj, old);
    } else if (strcmp(r->kind, "Event") == 0 && strcmp(r->group, "events.k8s.io") == 0) {
        validate_event_v1(fe, obj);
    } else if (strcmp(r->kind, "Event") == 0) {
        /* Legacy events skip ObjectMeta validation in their strategy; the
         * generic check that follows it runs only if the strategy passed.
         * (events.k8s.io Events take the events/v1 path above, as kube's
         * ValidateEventCreate does for that request version.) */
        validate_event_legacy(fe, obj);
        if (sk_field_errors_count(fe) == 0)
            validate_meta(fe, obj, 1, NAME_PATH_SEGMENT, 0);
    } else {
        validate_meta(fe, obj, r->namespaced, name_rule_of(r), 1);
        if (!*r->group && strcmp(r->kind, "Pod") == 0) {
            validate_pod_spec(fe, at(obj, "spec"), "spec");
            if (old)
                validate_pod_update(fe, obj, old);
        } else if (!*r->group && strcmp(r->kind, "Service") == 0) {
            validate_service(fe, obj, old);
        } else if (strcmp(r->group, "admissionregistration.k8s.io") == 0 &&
                   (strcmp(r->kind, "ValidatingWebhookConfiguration") == 0 ||
                    strcmp(r->kind, "MutatingWebhookConfiguration") == 0)) {
            validate_webhook_config(fe, obj, old, r->kind[0] == 'M');
        } else if (strcmp(r->group, "admissionregistration.k8s.io") == 0 &&
                   strcmp(r->kind, "ValidatingAdmissionPolicy") == 0) {
            validate_admission_policy(fe, obj, old);
        } else if (strcmp(r->group, "admissionregistration.k8s.io") == 0 &&
                   strcmp(r->kind, "ValidatingAdmissionPolicyBinding") == 0) {
            validate_admission_policy_binding(fe, obj);
        }
        for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
            if (strcmp(workloads[i].kind, r->kind) != 0 || strcmp(workloads[i].group, r->group))
                continue;
            validate_workload(fe, &workloads[i], obj);
            if (old)
                validate_workload_update(fe, r, obj, old);
        }
    }
}

/* The kind's errors of a typed obj as the Status parts: SK_ERR_INVALID
 * with *causes_out and *msg_out new, or SK_OK. */
static sk_err validate_typed(const sk_resource *r, const json_t *obj, const json_t *old,
                             json_t **causes_out, char **msg_out)
{
    sk_field_errors *fe = NULL;
    sk_err e = SK_OK;
    fe = sk_field_errors_new();
    validate_kind(r, fe, obj, old);
    if (sk_field_errors_count(fe) == 0)
        goto out;
    const char *name = str_at(obj, "metadata.name") ? str_at(obj, "metadata.name") : "";
    char *agg = sk_field_errors_message(fe);
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, r->kind);
    if (*r->group)
        sk_buf_printf(&m, ".%s", r->group);
    sk_buf_putc(&m, ' ');
    sk_buf_go_quoted(&m, name);
    sk_buf_printf(&m, " is invalid: %s", agg);
    free(agg);
    *causes_out = json_incref(fe->causes);
    *msg_out = sk_buf_steal(&m, NULL);
    e = SK_ERR_INVALID;
out:
    sk_field_errors_free(fe);
    return e;
}

sk_err sk_validate_object(const sk_resource *r, const json_t *obj, const json_t *old,
                          json_t **causes_out, char **msg_out)
{
    char *msg = NULL;
    if (sk_typed_check(r, obj, &msg) != SK_OK) {
        *causes_out = NULL;
        *msg_out = msg;
        return SK_ERR_BAD_REQUEST;
    }
    return validate_typed(r, obj, old, causes_out, msg_out);
}

void sk_validate_typed_errors(const sk_resource *r, const json_t *obj, const json_t *old,
                              sk_field_errors *fe)
{
    validate_kind(r, fe, obj, old);
}

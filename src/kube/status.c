/*
 * status.c - builds metav1.Status bodies; see status.h.
 *
 * Every string put into a Status goes through valid_string: a message may
 * quote what a client sent (a name, a selector, a parser's view of a bad
 * body), and one invalid UTF-8 byte would make the reply impossible to
 * encode. Invalid bytes become U+FFFD instead.
 */
#include "kube/status.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/utf8.h"

#include <string.h>

static json_t *valid_string(const char *s)
{
    size_t len = strlen(s);
    json_t *v;
    if (sk_utf8_valid(s, len)) {
        v = json_stringn(s, len);
    } else {
        sk_buf b = SK_BUF_INIT;
        sk_utf8_repair(&b, s, len);
        v = json_stringn(b.data, b.len);
        sk_buf_free(&b);
    }
    SK_CHECK_ALLOC(v);
    return v;
}

json_t *sk_status_new(sk_err e, const char *message, const char *group, const char *kind,
                      const char *name, json_t *causes)
{
    json_t *st = json_object();
    SK_CHECK_ALLOC(st);
    json_object_set_new(st, "kind", json_string("Status"));
    json_object_set_new(st, "apiVersion", json_string("v1"));
    json_object_set_new(st, "metadata", json_object());
    json_object_set_new(st, "status", json_string(e == SK_OK ? "Success" : "Failure"));
    json_object_set_new(st, "message", valid_string(message ? message : ""));
    if (e != SK_OK)
        json_object_set_new(st, "reason", json_string(sk_err_reason(e)));
    json_t *details = json_object();
    if (name && *name)
        json_object_set_new(details, "name", valid_string(name));
    if (group && *group)
        json_object_set_new(details, "group", valid_string(group));
    if (kind && *kind)
        json_object_set_new(details, "kind", valid_string(kind));
    if (causes)
        json_object_set_new(details, "causes", causes);
    if (sk_err_retry_after(e) > 0)
        json_object_set_new(details, "retryAfterSeconds", json_integer(sk_err_retry_after(e)));
    if (json_object_size(details) > 0)
        json_object_set_new(st, "details", details);
    else
        json_decref(details);
    json_object_set_new(st, "code", json_integer(sk_err_http_code(e)));
    return st;
}

json_t *sk_status_forbidden(const char *group, const char *resource, const char *name,
                            const char *text)
{
    int has_resource = resource && *resource;
    sk_buf msg = SK_BUF_INIT;
    if (!has_resource) {
        sk_buf_puts(&msg, "forbidden: ");
    } else {
        sk_buf_puts(&msg, resource);
        if (group && *group)
            sk_buf_printf(&msg, ".%s", group);
        if (name && *name) {
            sk_buf_putc(&msg, ' ');
            sk_buf_go_quoted(&msg, name);
        }
        sk_buf_puts(&msg, " is forbidden: ");
    }
    sk_buf_puts(&msg, text);
    json_t *st = sk_status_new(SK_ERR_FORBIDDEN, msg.data, has_resource ? group : NULL,
                               has_resource ? resource : NULL, name, NULL);
    sk_buf_free(&msg);
    return st;
}

void sk_status_add_cause(json_t *causes, const char *reason, const char *message, const char *field)
{
    json_t *c = json_object();
    if (reason)
        json_object_set_new(c, "reason", valid_string(reason));
    if (message)
        json_object_set_new(c, "message", valid_string(message));
    if (field)
        json_object_set_new(c, "field", valid_string(field));
    json_array_append_new(causes, c);
}

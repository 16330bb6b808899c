/*
 * objmeta.c - see objmeta.h.
 */
#include "kube/objmeta.h"
#include "core/buf.h"
#include "core/utf8.h"
#include "core/util.h"

#include <stdarg.h>
#include <string.h>

#define GENERATE_SUFFIX_LEN 5
#define MAX_GENERATED_PREFIX (63 - GENERATE_SUFFIX_LEN)

static sk_err fail(char **msg, sk_err e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static sk_err fail(char **msg, sk_err e, const char *fmt, ...)
{
    sk_buf b = SK_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sk_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    *msg = sk_buf_steal(&b, NULL);
    return e;
}

sk_err sk_objmeta_settle_namespace(const sk_resource *r, json_t *obj, const char *ns, char **msg)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *given = json_string_value(json_object_get(meta, "namespace"));
    if (!r->namespaced) {
        json_object_del(meta, "namespace");
        return SK_OK;
    }
    if (given && *given && strcmp(given, ns) != 0)
        return fail(msg, SK_ERR_BAD_REQUEST,
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request");
    json_object_set_new(meta, "namespace", json_string(ns));
    return SK_OK;
}

/* kube's SimpleNameGenerator: the prefix cut to 58 bytes (a 63-byte name
 * with the suffix), on a character boundary so the name stays UTF-8 for
 * validation to judge, plus 5 random characters. */
static void generate_name(json_t *meta, const char *prefix)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char rnd[GENERATE_SUFFIX_LEN];
    sk_random_bytes(rnd, sizeof rnd);
    char name[MAX_GENERATED_PREFIX + GENERATE_SUFFIX_LEN + 1];
    size_t n = sk_utf8_prefix(prefix, strlen(prefix), MAX_GENERATED_PREFIX);
    memcpy(name, prefix, n);
    for (int i = 0; i < GENERATE_SUFFIX_LEN; i++)
        name[n + i] = alphabet[rnd[i] % (sizeof alphabet - 1)];
    name[n + GENERATE_SUFFIX_LEN] = '\0';
    json_object_set_new(meta, "name", json_string(name));
}

void sk_objmeta_on_create(json_t *obj, int64_t now_s)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    if ((!name || !*name) && gen && *gen)
        generate_name(meta, gen);
    char uid[37], ts[21];
    sk_uuid4(uid);
    sk_format_rfc3339(now_s, ts);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(ts));
    static const char *const server_only[] = {"generation", "resourceVersion", "selfLink",
                                              "deletionTimestamp", "deletionGracePeriodSeconds"};
    for (size_t i = 0; i < sizeof server_only / sizeof *server_only; i++)
        json_object_del(meta, server_only[i]);
}

void sk_objmeta_wipe_system(json_t *obj)
{
    static const char *const wiped[] = {"creationTimestamp", "uid", "deletionTimestamp",
                                        "deletionGracePeriodSeconds", "selfLink"};
    json_t *meta = json_object_get(obj, "metadata");
    for (size_t i = 0; i < sizeof wiped / sizeof *wiped; i++)
        json_object_del(meta, wiped[i]);
}

sk_err sk_objmeta_check_update(const json_t *obj, const json_t *old, const char *name, char **msg)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const json_t *old_meta = json_object_get(old, "metadata");
    const char *given = json_string_value(json_object_get(meta, "name"));
    if (!given || strcmp(given, name) != 0)
        return fail(msg, SK_ERR_BAD_REQUEST,
                    "the name of the object (%s) does not match the name on the URL (%s)",
                    given ? given : "", name);
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *old_uid = json_string_value(json_object_get(old_meta, "uid"));
    if (uid && *uid && strcmp(uid, old_uid ? old_uid : "") != 0)
        return fail(msg, SK_ERR_CONFLICT,
                    "Precondition failed: UID in precondition: %s, UID in object meta: %s", uid,
                    old_uid ? old_uid : "");
    return SK_OK;
}

sk_err sk_objmeta_on_update(json_t *obj, const json_t *old, const char *name, char **msg)
{
    sk_err err = sk_objmeta_check_update(obj, old, name, msg);
    if (err != SK_OK)
        return err;
    json_t *meta = json_object_get(obj, "metadata");
    const json_t *old_meta = json_object_get(old, "metadata");
    static const char *const carried[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                          "deletionGracePeriodSeconds", "generation"};
    for (size_t i = 0; i < sizeof carried / sizeof *carried; i++) {
        json_t *v = json_object_get(old_meta, carried[i]);
        if (v)
            json_object_set(meta, carried[i], v);
        else
            json_object_del(meta, carried[i]);
    }
    json_object_del(meta, "selfLink");
    return SK_OK;
}

/*
 * satoken.c - see satoken.h. Claims are written in kube's shape so tokens
 * minted here read the same to any tool that decodes them (jwt.io,
 * client-go's projected-token code).
 */
#include "kube/satoken.h"

#include "core/buf.h"
#include "core/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sk_satoken_username(const char *ns, const char *name)
{
    char *s = NULL;
    SK_CHECK(asprintf(&s, "system:serviceaccount:%s:%s", ns, name) >= 0);
    return s;
}

static const char *bound_claim(const char *kind)
{
    if (!kind)
        return NULL;
    if (strcmp(kind, "Pod") == 0)
        return "pod";
    if (strcmp(kind, "Secret") == 0)
        return "secret";
    if (strcmp(kind, "Node") == 0)
        return "node";
    return NULL;
}

json_t *sk_satoken_claims(const sk_satoken *t, const char *issuer, const char *const *auds,
                          size_t n)
{
    json_t *aud = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(aud, json_string(auds[i]));
    json_t *k8s = json_pack("{s:s, s:{s:s, s:s}}", "namespace", t->ns, "serviceaccount", "name",
                            t->name, "uid", t->uid);
    const char *claim = bound_claim(t->bound_kind);
    if (claim)
        json_object_set_new(k8s, claim,
                            json_pack("{s:s, s:s}", "name", t->bound_name, "uid", t->bound_uid));
    if (claim && strcmp(claim, "pod") == 0 && t->node_name && *t->node_name) {
        json_t *node = json_pack("{s:s}", "name", t->node_name);
        if (t->node_uid && *t->node_uid)
            json_object_set_new(node, "uid", json_string(t->node_uid));
        json_object_set_new(k8s, "node", node);
    }
    char *sub = sk_satoken_username(t->ns, t->name);
    json_t *c = json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:s, s:o}", "iss", issuer, "sub", sub,
                          "aud", aud, "exp", (json_int_t)t->exp, "iat", (json_int_t)t->iat,
                          "nbf", (json_int_t)t->iat, "jti", t->jti, "kubernetes.io", k8s);
    free(sub);
    SK_CHECK_ALLOC(c);
    return c;
}

const char *sk_satoken_issuer(const json_t *claims)
{
    return json_string_value(json_object_get(claims, "iss"));
}

/* A NumericDate claim: 1 with *out set when present and a number of
 * seconds an int64 holds; 0 when absent; -1 when present but not that
 * (another type, or a real out of range: casting it would be undefined). */
static int numeric_date(const json_t *claims, const char *key, int64_t *out)
{
    const json_t *v = json_object_get(claims, key);
    if (!v)
        return 0;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 1;
    }
    double d = json_real_value(v); /* 0 for other types */
    if (!json_is_real(v) || !(d > -9.2e18 && d < 9.2e18))
        return -1;
    *out = (int64_t)d;
    return 1;
}

static void set_why(char **why, const char *text)
{
    *why = strdup(text);
    SK_CHECK_ALLOC(*why);
}

/* The audiences as a quoted list, Go's %q of a []string. */
static void quote_list(sk_buf *b, const json_t *list, const char *const *auds, size_t n)
{
    sk_buf_puts(b, "[");
    size_t count = list ? json_array_size(list) : n;
    for (size_t i = 0; i < count; i++) {
        const char *s = list ? json_string_value(json_array_get(list, i)) : auds[i];
        sk_buf_printf(b, "%s\"%s\"", i ? " " : "", s ? s : "");
    }
    sk_buf_puts(b, "]");
}

/* A {name, uid} reference of the private claim: 1 when well formed. */
static int read_ref(const json_t *ref, const char **name, const char **uid)
{
    *name = json_string_value(json_object_get(ref, "name"));
    *uid = json_string_value(json_object_get(ref, "uid"));
    return *name && *uid && **name;
}

sk_err sk_satoken_check(const json_t *claims, const char *issuer, int64_t now,
                        const char *const *auds, size_t n, sk_satoken *out,
                        const char **aud_out, size_t *n_aud, char **why)
{
    const char *iss = sk_satoken_issuer(claims);
    if (!iss || strcmp(iss, issuer) != 0) {
        set_why(why, "token issuer is not accepted");
        return SK_ERR_UNAUTHORIZED;
    }
    int64_t exp = 0, nbf = 0, iat = 0;
    int has_nbf = numeric_date(claims, "nbf", &nbf), has_iat = numeric_date(claims, "iat", &iat);
    if (numeric_date(claims, "exp", &exp) != 1 || has_nbf < 0 || has_iat < 0) {
        set_why(why, "service account token claims could not be validated due to unexpected "
                     "validation error");
        return SK_ERR_UNAUTHORIZED;
    }
    /* now - leeway, not exp + leeway: exp may be near INT64_MAX */
    if (now - SK_SATOKEN_LEEWAY_S > exp) {
        set_why(why, "service account token has expired");
        return SK_ERR_UNAUTHORIZED;
    }
    if (has_nbf && now + SK_SATOKEN_LEEWAY_S < nbf) {
        set_why(why, "service account token is not valid yet");
        return SK_ERR_UNAUTHORIZED;
    }
    if (has_iat && now + SK_SATOKEN_LEEWAY_S < iat) {
        set_why(why, "service account token is issued in the future");
        return SK_ERR_UNAUTHORIZED;
    }
    /* aud is a string or a list of strings (RFC 7519 section 4.1.3) */
    const json_t *aud = json_object_get(claims, "aud");
    json_t *list = json_is_string(aud) ? json_pack("[O]", aud) : json_incref((json_t *)aud);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j;
        json_t *v;
        json_array_foreach(list, j, v)
        {
            if (json_is_string(v) && strcmp(json_string_value(v), auds[i]) == 0) {
                aud_out[m++] = auds[i];
                break;
            }
        }
    }
    if (m == 0) {
        sk_buf b = SK_BUF_INIT;
        sk_buf_puts(&b, "token audiences ");
        quote_list(&b, json_is_array(list) ? list : NULL, NULL, 0);
        sk_buf_puts(&b, " is invalid for the target audiences ");
        quote_list(&b, NULL, auds, n);
        *why = b.data;
        json_decref(list);
        return SK_ERR_UNAUTHORIZED;
    }
    json_decref(list);
    const json_t *k8s = json_object_get(claims, "kubernetes.io");
    sk_satoken t = {.ns = json_string_value(json_object_get(k8s, "namespace")),
                    .jti = json_string_value(json_object_get(claims, "jti")),
                    .iat = iat,
                    .exp = exp};
    int ok = t.ns && *t.ns && read_ref(json_object_get(k8s, "serviceaccount"), &t.name, &t.uid);
    static const char *const kinds[] = {"Pod", "Secret", "Node"};
    for (size_t i = 0; ok && i < sizeof kinds / sizeof *kinds; i++) {
        const json_t *ref = json_object_get(k8s, bound_claim(kinds[i]));
        if (!ref)
            continue;
        if (i == 2 && t.bound_kind && strcmp(t.bound_kind, "Pod") == 0) {
            /* the pod's node: a name, the uid only when the node existed */
            t.node_name = json_string_value(json_object_get(ref, "name"));
            t.node_uid = json_string_value(json_object_get(ref, "uid"));
            const json_t *uid = json_object_get(ref, "uid");
            ok = t.node_name && *t.node_name && (!uid || json_is_string(uid));
            continue;
        }
        if (t.bound_kind || !read_ref(ref, &t.bound_name, &t.bound_uid))
            ok = 0;
        t.bound_kind = kinds[i];
    }
    if (!ok) {
        set_why(why, "service account token claims could not be validated due to unexpected "
                     "private claim");
        return SK_ERR_UNAUTHORIZED;
    }
    *out = t;
    *n_aud = m;
    return SK_OK;
}

/*
 * authn.c - see authn.h. Every user is built in the call's arena, so the
 * token file's entries and the connection's certificate subject are only
 * read during sk_api_call_start.
 *
 * A bearer token is offered to the ServiceAccount authenticator first only
 * when its unverified claims name our issuer (kube routes tokens the same
 * way), so a token-file token that happens to look like a JWT still
 * reaches the file, and a forged JWT with our issuer never does.
 */
#include "api/authn.h"

#include "core/util.h"
#include "kube/registry.h"
#include "kube/satoken.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define AUTHENTICATED "system:authenticated"

/* A copy of u in a with system:authenticated added unless u has it. */
static const sk_user *with_authenticated(sk_arena *a, const sk_user *u)
{
    int has = 0;
    for (size_t i = 0; i < u->n_groups; i++)
        has |= strcmp(u->groups[i], AUTHENTICATED) == 0;
    size_t n = u->n_groups + !has;
    const char **groups = sk_arena_alloc(a, n * sizeof *groups);
    for (size_t i = 0; i < u->n_groups; i++)
        groups[i] = sk_arena_strdup(a, u->groups[i]);
    if (!has)
        groups[n - 1] = AUTHENTICATED;
    sk_user *copy = sk_arena_alloc(a, sizeof *copy);
    copy->name = sk_arena_strdup(a, u->name);
    copy->uid = sk_arena_strdup(a, u->uid ? u->uid : "");
    copy->groups = groups;
    copy->n_groups = n;
    return copy;
}

const sk_user *sk_authn_cert_user(sk_arena *a, const char *cn, const char *const *orgs, size_t n)
{
    if (!cn || !*cn)
        return NULL;
    sk_user u = {.name = cn, .uid = "", .groups = orgs, .n_groups = n};
    return with_authenticated(a, &u);
}

/* The bearer token of an Authorization header as kube reads it (trimmed,
 * split at single spaces, scheme without case), copied into a; NULL when
 * the header carries none (*extra_space: because a second space came
 * where the token should start). */
static const char *bearer_token(sk_arena *a, const char *header, int *extra_space)
{
    if (!header)
        return NULL;
    while (isspace((unsigned char)*header))
        header++;
    size_t end = strlen(header);
    while (end > 0 && isspace((unsigned char)header[end - 1]))
        end--;
    const char *space = memchr(header, ' ', end);
    if (!space || space - header != 6 || strncasecmp(header, "bearer", 6) != 0)
        return NULL;
    const char *token = space + 1;
    const char *stop = memchr(token, ' ', (size_t)(header + end - token));
    size_t len = (size_t)((stop ? stop : header + end) - token);
    if (len == 0) {
        *extra_space = stop != NULL;
        return NULL;
    }
    char *copy = sk_arena_alloc(a, len + 1);
    memcpy(copy, token, len);
    return copy;
}

static const sk_user *fixed_user(sk_arena *a, const char *name, const char *g1, const char *g2)
{
    const char **groups = sk_arena_alloc(a, 2 * sizeof *groups);
    groups[0] = g1;
    groups[1] = g2;
    sk_user *u = sk_arena_alloc(a, sizeof *u);
    u->name = name;
    u->uid = "";
    u->groups = groups;
    u->n_groups = g2 ? 2 : 1;
    return u;
}

/* ---- ServiceAccount tokens ---- */

/* The core/v1 object live at rev (0: the store's latest), new reference,
 * or NULL. */
static json_t *object_at(sk_reader *rd, const char *resource, const char *ns, const char *name,
                         int64_t rev)
{
    const sk_resource *r = sk_registry_find("", "v1", resource);
    sk_blob *b = NULL;
    if (!r || rev < 0 || sk_reader_get(rd, r->storage, ns, name, rev, &b) != SK_OK)
        return NULL;
    json_t *obj = sk_reader_object(b);
    sk_blob_unref(b);
    return obj;
}

/* Whether obj was deleted (deletionTimestamp) before the leeway. */
static int deleted_long_ago(const json_t *obj, int64_t now)
{
    const char *ts =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp"));
    int64_t t = ts ? sk_parse_rfc3339(ts) : -1;
    return t >= 0 && t < now - SK_SATOKEN_LEEWAY_S;
}

static const char *uid_of(const json_t *obj)
{
    const char *uid =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
    return uid ? uid : "";
}

/* Checks that the objects t names stood at rev (0: the latest), as kube's
 * validator does; NULL when they did, else why not (in a, kube's words). */
static const char *objects_stood(sk_reader *rd, sk_arena *a, const sk_satoken *t, int64_t now,
                                 int64_t rev)
{
    const char *why = NULL;
    char buf[512];
    json_t *sa = object_at(rd, "serviceaccounts", t->ns, t->name, rev);
    json_t *bound = NULL;
    if (!sa) {
        snprintf(buf, sizeof buf, "serviceaccounts \"%s\" not found", t->name);
        why = buf;
    } else if (deleted_long_ago(sa, now)) {
        snprintf(buf, sizeof buf, "service account %s/%s has been deleted", t->ns, t->name);
        why = buf;
    } else if (strcmp(uid_of(sa), t->uid) != 0) {
        snprintf(buf, sizeof buf, "service account UID (%s) does not match claim (%s)",
                 uid_of(sa), t->uid);
        why = buf;
    } else if (t->bound_kind) {
        static const struct {
            const char *kind, *resource, *word;
        } kinds[] = {{"Pod", "pods", "pod"}, {"Secret", "secrets", "secret"},
                     {"Node", "nodes", "node"}};
        size_t k = 0;
        while (strcmp(kinds[k].kind, t->bound_kind) != 0)
            k++;
        int cluster = strcmp(t->bound_kind, "Node") == 0;
        bound = object_at(rd, kinds[k].resource, cluster ? "" : t->ns, t->bound_name, rev);
        if (!bound || deleted_long_ago(bound, now)) {
            why = "service account token has been invalidated";
        } else if (strcmp(uid_of(bound), t->bound_uid) != 0) {
            snprintf(buf, sizeof buf, "%s UID (%s) does not match service account %s ref claim (%s)",
                     kinds[k].word, uid_of(bound), kinds[k].word, t->bound_uid);
            why = buf;
        }
    }
    json_decref(sa);
    json_decref(bound);
    return why ? sk_arena_strdup(a, why) : NULL;
}

/* Whether the objects t names still stand: asked of the cache (no SQL per
 * request), and a refusal confirmed at the store's latest revision, as
 * kube reads them from storage: the cache of an instance that has not yet
 * seen a ServiceAccount made a moment ago, perhaps through another
 * instance, must not refuse its token. Only a token that was validly
 * signed gets here, so the store read costs nothing a stranger can cause. */
static const char *objects_stand(sk_reader *rd, sk_arena *a, const sk_satoken *t, int64_t now)
{
    int64_t cached = sk_reader_cache_rev(rd);
    const char *why = cached > 0 ? objects_stood(rd, a, t, now, cached) : "no cache";
    return why ? objects_stood(rd, a, t, now, 0) : NULL;
}

/* The user of a checked token (strings copied into a). */
static const sk_user *sa_user(sk_arena *a, const sk_satoken *t)
{
    const char **groups = sk_arena_alloc(a, 3 * sizeof *groups);
    groups[0] = "system:serviceaccounts";
    groups[1] = sk_arena_printf(a, "system:serviceaccounts:%s", t->ns);
    groups[2] = AUTHENTICATED;
    const char **keys = sk_arena_alloc(a, 5 * sizeof *keys);
    const char **values = sk_arena_alloc(a, 5 * sizeof *values);
    size_t n = 0;
    if (t->jti && *t->jti) {
        keys[n] = "authentication.kubernetes.io/credential-id";
        values[n++] = sk_arena_printf(a, "JTI=%s", t->jti);
    }
    if (t->bound_kind && strcmp(t->bound_kind, "Secret") != 0) {
        int pod = strcmp(t->bound_kind, "Pod") == 0;
        keys[n] = pod ? "authentication.kubernetes.io/pod-name"
                      : "authentication.kubernetes.io/node-name";
        values[n++] = sk_arena_strdup(a, t->bound_name);
        keys[n] = pod ? "authentication.kubernetes.io/pod-uid"
                      : "authentication.kubernetes.io/node-uid";
        values[n++] = sk_arena_strdup(a, t->bound_uid);
    }
    if (t->node_name) {
        keys[n] = "authentication.kubernetes.io/node-name";
        values[n++] = sk_arena_strdup(a, t->node_name);
        if (t->node_uid && *t->node_uid) {
            keys[n] = "authentication.kubernetes.io/node-uid";
            values[n++] = sk_arena_strdup(a, t->node_uid);
        }
    }
    sk_user *u = sk_arena_alloc(a, sizeof *u);
    char *name = sk_satoken_username(t->ns, t->name);
    u->name = sk_arena_strdup(a, name);
    free(name);
    u->uid = sk_arena_strdup(a, t->uid);
    u->groups = groups;
    u->n_groups = 3;
    u->extra_keys = keys;
    u->extra_values = values;
    u->n_extra = n;
    return u;
}

/* 0 when token is not a ServiceAccount token of ours (another
 * authenticator's to judge); else 1 with *out filled. */
static int sa_token(const sk_authn_config *cfg, sk_reader *rd, sk_arena *a, const char *token,
                    const char *const *auds, size_t n, sk_authn_result *out)
{
    if (!cfg->sa_keys || !rd)
        return 0;
    json_t *peek = sk_jwt_peek(token);
    const char *iss = sk_satoken_issuer(peek);
    int ours = iss && strcmp(iss, cfg->sa_issuer) == 0;
    json_decref(peek);
    if (!ours)
        return 0;
    json_t *claims = NULL;
    const char *why = NULL;
    char *check_why = NULL;
    const char **aud_out = sk_arena_alloc(a, (n ? n : 1) * sizeof *aud_out);
    size_t m = 0;
    sk_satoken t;
    int64_t now = sk_wall_s();
    if (sk_jwt_verify(cfg->sa_keys, token, &claims, &why) != SK_OK) {
        out->error = why;
    } else if (sk_satoken_check(claims, cfg->sa_issuer, now, auds, n, &t, aud_out, &m,
                                &check_why) != SK_OK) {
        out->error = sk_arena_strdup(a, check_why);
    } else if ((out->error = objects_stand(rd, a, &t, now)) == NULL) {
        out->user = sa_user(a, &t);
        out->audiences = aud_out;
        out->n_audiences = m;
    }
    free(check_why);
    json_decref(claims);
    return 1;
}

void sk_authn_token(const sk_authn_config *cfg, sk_reader *rd, sk_arena *a, const char *token,
                    const char *const *auds, size_t n, sk_authn_result *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0) {
        auds = cfg->audiences;
        n = cfg->n_audiences;
    }
    if (sa_token(cfg, rd, a, token, auds, n, out))
        return;
    /* The token file knows no audiences: its tokens are good for the API's
     * own (kube's audience-agnostic wrapper), so for no others. */
    const char **both = sk_arena_alloc(a, (n ? n : 1) * sizeof *both);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int found = cfg->n_audiences == 0;
        for (size_t j = 0; j < cfg->n_audiences && !found; j++)
            found = strcmp(auds[i], cfg->audiences[j]) == 0;
        if (found)
            both[m++] = auds[i];
    }
    const sk_user *u = m || n == 0 ? sk_tokenfile_lookup(cfg->tokens, token) : NULL;
    if (u) {
        out->user = with_authenticated(a, u);
        out->audiences = both;
        out->n_audiences = m;
    }
}

const sk_user *sk_authn_request(const sk_authn_config *cfg, sk_reader *rd, sk_arena *a,
                                const sk_http_req *req, const char **warning)
{
    int extra_space = 0;
    *warning = NULL;
    if (req->peer_cert == SK_PEER_CERT_VALID) {
        const sk_user *u = sk_authn_cert_user(a, req->peer_cn, req->peer_orgs, req->n_peer_orgs);
        if (u)
            return u;
    }
    const char *token = bearer_token(a, req->header(req->ctx, "Authorization"), &extra_space);
    if (extra_space)
        *warning = "the provided Authorization header contains extra space before the bearer "
                   "token, and is ignored";
    if (token) {
        sk_authn_result r;
        sk_authn_token(cfg, rd, a, token, NULL, 0, &r);
        return r.user;
    }
    if (req->peer_cert == SK_PEER_CERT_INVALID)
        return NULL;
    if (cfg->trust_unauthenticated)
        return fixed_user(a, "system:unsecured", "system:masters", AUTHENTICATED);
    if (cfg->anonymous)
        return fixed_user(a, "system:anonymous", "system:unauthenticated", NULL);
    return NULL;
}

json_t *sk_authn_user_info(const sk_user *u)
{
    json_t *info = json_object();
    if (u->name && *u->name)
        json_object_set_new(info, "username", json_string(u->name));
    if (u->uid && *u->uid)
        json_object_set_new(info, "uid", json_string(u->uid));
    if (u->n_groups) {
        json_t *groups = json_array();
        for (size_t i = 0; i < u->n_groups; i++)
            json_array_append_new(groups, json_string(u->groups[i]));
        json_object_set_new(info, "groups", groups);
    }
    if (u->n_extra) {
        json_t *extra = json_object();
        for (size_t i = 0; i < u->n_extra; i++) {
            json_t *values = json_object_get(extra, u->extra_keys[i]);
            if (!values)
                json_object_set_new(extra, u->extra_keys[i], values = json_array());
            json_array_append_new(values, json_string(u->extra_values[i]));
        }
        json_object_set_new(info, "extra", extra);
    }
    return info;
}

/*
 * authn.c - see authn.h. Every user is built in the call's arena, so the
 * token file's entries and the connection's certificate subject are only
 * read during sk_api_call_start.
 */
#include "api/authn.h"

#include <ctype.h>
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

const sk_user *sk_authn_request(const sk_authn_config *cfg, sk_arena *a, const sk_http_req *req,
                                const char **warning)
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
        const sk_user *u = sk_tokenfile_lookup(cfg->tokens, token);
        return u ? with_authenticated(a, u) : NULL;
    }
    if (req->peer_cert == SK_PEER_CERT_INVALID)
        return NULL;
    if (cfg->trust_unauthenticated)
        return fixed_user(a, "system:unsecured", "system:masters", AUTHENTICATED);
    if (cfg->anonymous)
        return fixed_user(a, "system:anonymous", "system:unauthenticated", NULL);
    return NULL;
}

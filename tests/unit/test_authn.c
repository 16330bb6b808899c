/*
 * test_authn.c - who a request is (api/authn): certificate subjects to
 * users, kube's reading of the Authorization header, and the outcome of
 * every combination of certificate, token and mode (TLS without and with
 * anonymous auth, plain HTTP), against a real token table; TokenReview's
 * audiences for the token file's tokens (kube's audience-agnostic wrapper:
 * good for the API audiences asked for, unknown for others). The
 * ServiceAccount path needs a cache: tests/e2e/test_sa_tokens.py.
 */
#include "api/authn.h"
#include "core/arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static const char *auth_header;

static const char *header(void *ctx, const char *key)
{
    (void)ctx;
    return strcmp(key, "Authorization") == 0 ? auth_header : NULL;
}

static void assert_groups(const sk_user *u, const char *const *want, size_t n)
{
    assert_int_equal(u->n_groups, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(u->groups[i], want[i]);
}

static void test_cert_user(void **state)
{
    (void)state;
    sk_arena *a = sk_arena_new();
    static const char *const orgs[] = {"system:masters", "team"};
    const sk_user *u = sk_authn_cert_user(a, "kubernetes-admin", orgs, 2);
    assert_string_equal(u->name, "kubernetes-admin");
    assert_string_equal(u->uid, "");
    static const char *const want[] = {"system:masters", "team", "system:authenticated"};
    assert_groups(u, want, 3);
    /* system:authenticated is not added twice */
    static const char *const has[] = {"system:authenticated"};
    u = sk_authn_cert_user(a, "node", has, 1);
    assert_groups(u, has, 1);
    assert_null(sk_authn_cert_user(a, "", orgs, 2));
    assert_null(sk_authn_cert_user(a, NULL, NULL, 0));
    sk_arena_free(a);
}

static const char *last_warning;

static const sk_user *run(const sk_authn_config *cfg, sk_arena *a, int cert, const char *auth)
{
    static const char *const orgs[] = {"dev"};
    auth_header = auth;
    sk_http_req req = {.method = "GET",
                       .header = header,
                       .peer_cert = cert,
                       .peer_cn = cert == SK_PEER_CERT_VALID ? "carol" : NULL,
                       .peer_orgs = orgs,
                       .n_peer_orgs = cert == SK_PEER_CERT_VALID ? 1 : 0};
    return sk_authn_request(cfg, NULL, a, &req, &last_warning);
}

static void test_decisions(void **state)
{
    (void)state;
    sk_tokenfile *tokens = NULL;
    char *msg = NULL;
    const char *csv = "s3cret,alice,uid-1,\"a,b\"\n";
    assert_int_equal(sk_tokenfile_parse(csv, strlen(csv), &tokens, &msg), SK_OK);
    sk_arena *a = sk_arena_new();
    sk_authn_config strict = {.tokens = tokens};
    sk_authn_config anon = {.tokens = tokens, .anonymous = 1};
    sk_authn_config plain = {.tokens = NULL, .trust_unauthenticated = 1};

    const sk_user *u = run(&strict, a, SK_PEER_CERT_VALID, NULL);
    assert_string_equal(u->name, "carol");
    /* a valid certificate wins over any token, as kube's x509 runs first */
    u = run(&strict, a, SK_PEER_CERT_VALID, "Bearer garbage");
    assert_string_equal(u->name, "carol");

    u = run(&strict, a, SK_PEER_CERT_NONE, "Bearer s3cret");
    assert_string_equal(u->name, "alice");
    assert_string_equal(u->uid, "uid-1");
    static const char *const want[] = {"a", "b", "system:authenticated"};
    assert_groups(u, want, 3);
    /* kube's header reading: scheme without case, surrounding blanks */
    assert_non_null(run(&strict, a, SK_PEER_CERT_NONE, "  bEaReR s3cret  "));
    assert_non_null(run(&strict, a, SK_PEER_CERT_NONE, "Bearer s3cret extra"));
    /* an invalid certificate does not stop a valid token */
    assert_non_null(run(&strict, a, SK_PEER_CERT_INVALID, "Bearer s3cret"));

    assert_null(run(&strict, a, SK_PEER_CERT_NONE, "Bearer garbage"));
    assert_null(run(&strict, a, SK_PEER_CERT_NONE, "Bearer s3cre"));
    assert_null(run(&strict, a, SK_PEER_CERT_NONE, NULL));
    assert_null(run(&strict, a, SK_PEER_CERT_INVALID, NULL));
    /* not a bearer token: no credentials */
    assert_null(run(&strict, a, SK_PEER_CERT_NONE, "Basic YWxpY2U6eA=="));
    assert_null(run(&strict, a, SK_PEER_CERT_NONE, "Bearer"));
    assert_null(last_warning);
    /* a space before the token: ignored, with kube's warning */
    assert_null(run(&strict, a, SK_PEER_CERT_NONE, "Bearer  s3cret"));
    assert_string_equal(last_warning, "the provided Authorization header contains extra space "
                                      "before the bearer token, and is ignored");
    u = run(&plain, a, SK_PEER_CERT_NONE, "Bearer  s3cret");
    assert_string_equal(u->name, "system:unsecured");
    assert_non_null(last_warning);

    u = run(&anon, a, SK_PEER_CERT_NONE, NULL);
    assert_string_equal(u->name, "system:anonymous");
    static const char *const unauth[] = {"system:unauthenticated"};
    assert_groups(u, unauth, 1);
    u = run(&anon, a, SK_PEER_CERT_NONE, "Basic YWxpY2U6eA==");
    assert_string_equal(u->name, "system:anonymous");
    /* a bad credential is never taken for anonymous */
    assert_null(run(&anon, a, SK_PEER_CERT_NONE, "Bearer garbage"));
    assert_null(run(&anon, a, SK_PEER_CERT_INVALID, NULL));

    u = run(&plain, a, SK_PEER_CERT_NONE, NULL);
    assert_string_equal(u->name, "system:unsecured");
    static const char *const masters[] = {"system:masters", "system:authenticated"};
    assert_groups(u, masters, 2);
    /* with no token file, no token is valid, even in plain mode */
    assert_null(run(&plain, a, SK_PEER_CERT_NONE, "Bearer s3cret"));

    sk_arena_free(a);
    sk_tokenfile_free(tokens);
}

static void test_token_audiences(void **state)
{
    (void)state;
    sk_tokenfile *tokens = NULL;
    char *msg = NULL;
    const char *csv = "s3cret,alice,uid-1\n";
    assert_int_equal(sk_tokenfile_parse(csv, strlen(csv), &tokens, &msg), SK_OK);
    sk_arena *a = sk_arena_new();
    static const char *const api[] = {"api", "issuer"};
    sk_authn_config cfg = {.tokens = tokens, .audiences = api, .n_audiences = 2};
    sk_authn_result r;
    sk_authn_token(&cfg, NULL, a, "s3cret", NULL, 0, &r);
    assert_string_equal(r.user->name, "alice");
    assert_int_equal(r.n_audiences, 2);
    static const char *const asked[] = {"other", "issuer"};
    sk_authn_token(&cfg, NULL, a, "s3cret", asked, 2, &r);
    assert_non_null(r.user);
    assert_int_equal(r.n_audiences, 1);
    assert_string_equal(r.audiences[0], "issuer");
    sk_authn_token(&cfg, NULL, a, "s3cret", asked, 1, &r);
    assert_null(r.user);
    assert_null(r.error);
    sk_authn_token(&cfg, NULL, a, "wrong", NULL, 0, &r);
    assert_null(r.user);
    assert_null(r.error);
    /* a JWT-shaped token with no keys configured is the token file's */
    sk_authn_token(&cfg, NULL, a, "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln", NULL, 0, &r);
    assert_null(r.user);
    sk_arena_free(a);
    sk_tokenfile_free(tokens);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cert_user),
        cmocka_unit_test(test_decisions),
        cmocka_unit_test(test_token_audiences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

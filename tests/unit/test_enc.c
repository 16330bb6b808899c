/*
 * test_enc.c - encryption at rest (enc/enc): reading EncryptionConfiguration
 * as kube-apiserver 1.32 does (lookup by exact resource, "*.<group>", "*.*";
 * kube's validation and masking messages), and the providers: round trips
 * at every key size, wrong keys, rotation (a later key reads, the first one
 * writes, "stale" says which), identity in either place, tampering, and one
 * known-answer value per provider made by an independent implementation of
 * kube's layout (openssl enc for aescbc, python3-cryptography for aesgcm,
 * python3-nacl for secretbox), so values kube wrote read here.
 */
#include "enc/enc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* bytes 0..31 and 0..15, base64 */
#define KEY32 "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
#define KEY16 "AAECAwQFBgcICQoLDA0ODw=="
#define KEY24 "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX"
#define OTHER32 "//79/Pv6+fj39vX08/Lx8O/u7ezr6uno5+bl5OPi4eA="
#define PLAIN "{\"kind\":\"Secret\",\"data\":{\"password\":\"WA==\"}}"
#define AAD "/registry/secrets/default/s"

static sk_enc_config *parse_ok(const char *text)
{
    sk_enc_config *c = NULL;
    char *msg = NULL;
    sk_err err = sk_enc_config_parse(text, strlen(text), &c, &msg);
    if (err != SK_OK)
        fail_msg("parse failed: %s", msg);
    assert_null(msg);
    return c;
}

static char *parse_err(const char *text)
{
    sk_enc_config *c = NULL;
    char *msg = NULL;
    assert_int_equal(sk_enc_config_parse(text, strlen(text), &c, &msg), SK_ERR_INVALID);
    assert_null(c);
    assert_non_null(msg);
    return msg;
}

static void expect_err(const char *text, const char *want)
{
    char *msg = parse_err(text);
    if (strcmp(msg, want) != 0)
        fail_msg("got:  %s\nwant: %s", msg, want);
    free(msg);
}

/* A config for secrets with one provider element (YAML flow text). */
static sk_enc_config *secrets_config(const char *providers)
{
    char text[2048];
    snprintf(text, sizeof text,
             "apiVersion: apiserver.config.k8s.io/v1\n"
             "kind: EncryptionConfiguration\n"
             "resources:\n"
             "- resources: [secrets]\n"
             "  providers: %s\n",
             providers);
    return parse_ok(text);
}

static const sk_enc_chain *secrets(const sk_enc_config *c)
{
    const sk_enc_chain *ch = sk_enc_lookup(c, "", "secrets");
    assert_non_null(ch);
    return ch;
}

static char *seal(const sk_enc_config *c, const char *plain, size_t len)
{
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(sk_enc_seal(secrets(c), plain, len, AAD, strlen(AAD), &out, &n), SK_OK);
    assert_int_equal(strlen(out), n);
    return out;
}

/* Opens stored and checks it gives plain back, with the stale flag. */
static void open_ok(const sk_enc_config *c, const char *stored, const char *plain, size_t len,
                    bool want_stale)
{
    char *out = NULL, *msg = NULL;
    size_t n = 0;
    bool stale = !want_stale;
    sk_err err =
        sk_enc_open(secrets(c), stored, strlen(stored), AAD, strlen(AAD), &out, &n, &stale, &msg);
    if (err != SK_OK)
        fail_msg("open failed: %s", msg);
    assert_int_equal(n, len);
    assert_memory_equal(out, plain, len);
    assert_int_equal(out[n], '\0');
    assert_int_equal(stale, want_stale);
    free(out);
}

static char *open_err(const sk_enc_config *c, const char *stored, const char *aad)
{
    char *out = NULL, *msg = NULL;
    size_t n = 0;
    assert_int_equal(
        sk_enc_open(secrets(c), stored, strlen(stored), aad, strlen(aad), &out, &n, NULL, &msg),
        SK_ERR_INTERNAL);
    assert_null(out);
    assert_non_null(msg);
    return msg;
}

static void expect_open_err(const sk_enc_config *c, const char *stored, const char *want)
{
    char *msg = open_err(c, stored, AAD);
    if (strcmp(msg, want) != 0)
        fail_msg("got:  %s\nwant: %s", msg, want);
    free(msg);
}

/* ---- known answers (computed outside sqlkube, see the file comment) ---- */

static void test_known_aescbc(void **state)
{
    (void)state;
    /* printf PLAIN | openssl enc -aes-256-cbc -K 0001..1f -iv a0a1..af */
    sk_enc_config *c = secrets_config("[{aescbc: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    open_ok(c,
            "k8s:enc:aescbc:v1:key1:oKGio6SlpqeoqaqrrK2ur9pU6IHq+uaPNKot2wDla1LryPBEVaV8J+eK7uhQxB8"
            "CbTGXl9RaxIx7GA1c5R85Kw==",
            PLAIN, strlen(PLAIN), false);
    sk_enc_config_free(c);
}

static void test_known_aesgcm(void **state)
{
    (void)state;
    /* AESGCM(key 00..0f).encrypt(nonce b0..bb, PLAIN, AAD), python3-cryptography */
    const char *stored = "k8s:enc:aesgcm:v1:key1:sLGys7S1tre4ubq7Jevb9KnzCQWceT5lpx9rxPVxMxa9gzXc"
                         "2tR32MlgVajpm28RgDXC308s02Ul0hmIcooUwBlru2lNG/Dc";
    sk_enc_config *c = secrets_config("[{aesgcm: {keys: [{name: key1, secret: " KEY16 "}]}}]");
    open_ok(c, stored, PLAIN, strlen(PLAIN), false);
    /* the value is bound to its key: read under another one, it fails */
    char *msg = open_err(c, stored, "/registry/secrets/default/t");
    assert_string_equal(msg, "decrypting the stored value: aesgcm key \"key1\": cipher: message "
                             "authentication failed");
    free(msg);
    sk_enc_config_free(c);
}

static void test_known_secretbox(void **state)
{
    (void)state;
    /* nacl.secret.SecretBox(key 00..1f).encrypt(PLAIN, nonce c0..d7), python3-nacl */
    sk_enc_config *c = secrets_config("[{secretbox: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    open_ok(c,
            "k8s:enc:secretbox:v1:key1:wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbXBFK9ETB2Z8a/P0XIm1UbCubV6OA0"
            "11LVGXu5N+IXs1eyN4cu8o1ycw3HmVxufT8GNK8pL3t59EypJ2Lq",
            PLAIN, strlen(PLAIN), false);
    sk_enc_config_free(c);
}

/* ---- round trips ---- */

static void round_trip(const char *providers, const char *prefix)
{
    sk_enc_config *c = secrets_config(providers);
    static const size_t lens[] = {0, 1, 15, 16, 17, 31, 32, 33, 1000};
    char plain[1000];
    for (size_t i = 0; i < sizeof plain; i++)
        plain[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char *s = seal(c, plain, lens[i]);
        assert_memory_equal(s, prefix, strlen(prefix));
        /* text after the prefix is base64 only */
        const char *b = s + strlen(prefix);
        assert_int_equal(
            strspn(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
            strlen(b));
        open_ok(c, s, plain, lens[i], false);
        /* random IVs and nonces: sealing again gives other bytes */
        char *again = seal(c, plain, lens[i]);
        assert_string_not_equal(s, again);
        free(again);
        free(s);
    }
    sk_enc_config_free(c);
}

static void test_round_trips(void **state)
{
    (void)state;
    const char *keys[] = {KEY16, KEY24, KEY32};
    for (size_t k = 0; k < 3; k++) {
        char p[256];
        snprintf(p, sizeof p, "[{aescbc: {keys: [{name: k%zu, secret: \"%s\"}]}}]", k, keys[k]);
        char pre[64];
        snprintf(pre, sizeof pre, "k8s:enc:aescbc:v1:k%zu:", k);
        round_trip(p, pre);
        snprintf(p, sizeof p, "[{aesgcm: {keys: [{name: k%zu, secret: \"%s\"}]}}]", k, keys[k]);
        snprintf(pre, sizeof pre, "k8s:enc:aesgcm:v1:k%zu:", k);
        round_trip(p, pre);
    }
    round_trip("[{secretbox: {keys: [{name: sb, secret: " KEY32 "}]}}]",
               "k8s:enc:secretbox:v1:sb:");
}

static void test_plaintext_not_stored(void **state)
{
    (void)state;
    sk_enc_config *c = secrets_config("[{aesgcm: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    char *s = seal(c, PLAIN, strlen(PLAIN));
    assert_null(strstr(s, "password"));
    assert_null(strstr(s, "WA=="));
    free(s);
    sk_enc_config_free(c);
}

/* ---- keys: wrong, rotated, tampered ---- */

static void test_wrong_key(void **state)
{
    (void)state;
    const char *kinds[] = {"aescbc", "aesgcm", "secretbox"};
    for (size_t i = 0; i < 3; i++) {
        char p[256];
        snprintf(p, sizeof p, "[{%s: {keys: [{name: key1, secret: \"%s\"}]}}]", kinds[i], KEY32);
        sk_enc_config *right = secrets_config(p);
        snprintf(p, sizeof p, "[{%s: {keys: [{name: key1, secret: \"%s\"}]}}]", kinds[i], OTHER32);
        sk_enc_config *wrong = secrets_config(p);
        char *s = seal(right, PLAIN, strlen(PLAIN));
        char *msg = open_err(wrong, s, AAD);
        char want[64];
        snprintf(want, sizeof want, "decrypting the stored value: %s key \"key1\": ", kinds[i]);
        /* aescbc without a MAC mostly fails at its padding; any of its
         * padding errors is a refusal */
        assert_memory_equal(msg, want, strlen(want));
        free(msg);
        free(s);
        sk_enc_config_free(right);
        sk_enc_config_free(wrong);
    }
}

static void test_rotation(void **state)
{
    (void)state;
    sk_enc_config *old = secrets_config("[{aescbc: {keys: [{name: k1, secret: " KEY32 "}]}}]");
    sk_enc_config *added = secrets_config("[{aescbc: {keys: [{name: k2, secret: " OTHER32 "}, "
                                          "{name: k1, secret: " KEY32 "}]}}]");
    char *s1 = seal(old, PLAIN, strlen(PLAIN));
    /* a later key reads, and says the value wants rewriting */
    open_ok(added, s1, PLAIN, strlen(PLAIN), true);
    /* the first key writes */
    char *s2 = seal(added, PLAIN, strlen(PLAIN));
    assert_memory_equal(s2, "k8s:enc:aescbc:v1:k2:", 21);
    open_ok(added, s2, PLAIN, strlen(PLAIN), false);
    /* the old key alone does not read the new value: nothing matches */
    expect_open_err(old, s2,
                    "no matching prefix found: the value was written by "
                    "\"k8s:enc:aescbc:v1:k2:\", which no configured provider and key reads");
    /* a later provider reads too */
    sk_enc_config *moved = secrets_config("[{secretbox: {keys: [{name: sb, secret: " KEY32 "}]}}, "
                                          "{aescbc: {keys: [{name: k1, secret: " KEY32 "}]}}]");
    open_ok(moved, s1, PLAIN, strlen(PLAIN), true);
    free(s1);
    free(s2);
    sk_enc_config_free(old);
    sk_enc_config_free(added);
    sk_enc_config_free(moved);
}

static void test_tampered(void **state)
{
    (void)state;
    sk_enc_config *c = secrets_config("[{aesgcm: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    char *s = seal(c, PLAIN, strlen(PLAIN));
    size_t at = strlen("k8s:enc:aesgcm:v1:key1:") + 20;
    s[at] = s[at] == 'A' ? 'B' : 'A';
    expect_open_err(c, s,
                    "decrypting the stored value: aesgcm key \"key1\": cipher: message "
                    "authentication failed");
    expect_open_err(c, "k8s:enc:aesgcm:v1:key1:AAAA",
                    "decrypting the stored value: aesgcm key \"key1\": the stored data was "
                    "shorter than the required size");
    expect_open_err(c, "k8s:enc:aesgcm:v1:key1:not base64!",
                    "decrypting the stored value: aesgcm key \"key1\": the stored value is not "
                    "base64 after its prefix");
    free(s);
    sk_enc_config_free(c);
    c = secrets_config("[{aescbc: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    /* 17 bytes: an IV and one byte */
    expect_open_err(c, "k8s:enc:aescbc:v1:key1:AAAAAAAAAAAAAAAAAAAAAAA=",
                    "decrypting the stored value: aescbc key \"key1\": the stored data is not a "
                    "multiple of the block size");
    sk_enc_config_free(c);
}

/* ---- identity ---- */

static void test_identity(void **state)
{
    (void)state;
    /* identity first: kept plain, and encrypted values still read */
    sk_enc_config *c =
        secrets_config("[{identity: {}}, {aescbc: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    char *s = seal(c, PLAIN, strlen(PLAIN));
    assert_string_equal(s, PLAIN);
    open_ok(c, PLAIN, PLAIN, strlen(PLAIN), false);
    sk_enc_config *enc =
        secrets_config("[{aescbc: {keys: [{name: key1, secret: " KEY32 "}]}}, {identity: {}}]");
    char *e = seal(enc, PLAIN, strlen(PLAIN));
    open_ok(c, e, PLAIN, strlen(PLAIN), true);
    /* identity last: values written before encryption still read */
    open_ok(enc, PLAIN, PLAIN, strlen(PLAIN), true);
    /* without identity, a plain value matches nothing */
    sk_enc_config *only = secrets_config("[{aescbc: {keys: [{name: key1, secret: " KEY32 "}]}}]");
    expect_open_err(only, PLAIN, "no matching prefix found");
    /* identity alone does not pass encrypted bytes off as an object */
    sk_enc_config *plain = secrets_config("[{identity: {}}]");
    expect_open_err(plain, e,
                    "no matching prefix found: the value was written by "
                    "\"k8s:enc:aescbc:v1:key1:\", which no configured provider and key reads");
    free(s);
    free(e);
    sk_enc_config_free(c);
    sk_enc_config_free(enc);
    sk_enc_config_free(only);
    sk_enc_config_free(plain);
}

/* ---- which resources a config covers ---- */

static void test_lookup(void **state)
{
    (void)state;
    sk_enc_config *c =
        parse_ok("{\"apiVersion\": \"apiserver.config.k8s.io/v1\",\n"
                 " \"kind\": \"EncryptionConfiguration\",\n"
                 " \"resources\": [\n"
                 "  {\"resources\": [\"events\"], \"providers\": [{\"identity\": {}}]},\n"
                 "  {\"resources\": [\"secrets\", \"configmaps\"],\n"
                 "   \"providers\": [{\"aescbc\": {\"keys\": [{\"name\": \"a\", "
                 "\"secret\": \"" KEY32 "\"}]}}]},\n"
                 "  {\"resources\": [\"*.apps\"],\n"
                 "   \"providers\": [{\"aesgcm\": {\"keys\": [{\"name\": \"b\", "
                 "\"secret\": \"" KEY16 "\"}]}}]},\n"
                 "  {\"resources\": [\"secrets\"],\n"
                 "   \"providers\": [{\"secretbox\": {\"keys\": [{\"name\": \"c\", "
                 "\"secret\": \"" KEY32 "\"}]}}]},\n"
                 "  {\"resources\": [\"*.*\"],\n"
                 "   \"providers\": [{\"secretbox\": {\"keys\": [{\"name\": \"d\", "
                 "\"secret\": \"" KEY32 "\"}]}}]}]}");
    const sk_enc_chain *sec = sk_enc_lookup(c, "", "secrets");
    const sk_enc_chain *cm = sk_enc_lookup(c, "", "configmaps");
    const sk_enc_chain *dep = sk_enc_lookup(c, "apps", "deployments");
    const sk_enc_chain *rs = sk_enc_lookup(c, "apps", "replicasets");
    const sk_enc_chain *any = sk_enc_lookup(c, "", "pods");
    const sk_enc_chain *crd = sk_enc_lookup(c, "example.com", "widgets");
    assert_non_null(sec);
    assert_non_null(cm);
    assert_ptr_not_equal(sec, cm); /* secrets also has the later element's provider */
    assert_ptr_equal(dep, rs);
    assert_ptr_equal(any, crd);
    char *out;
    size_t n;
    assert_int_equal(sk_enc_seal(sec, "x", 1, NULL, 0, &out, &n), SK_OK);
    assert_memory_equal(out, "k8s:enc:aescbc:v1:a:", 20);
    free(out);
    assert_int_equal(sk_enc_seal(dep, "x", 1, NULL, 0, &out, &n), SK_OK);
    assert_memory_equal(out, "k8s:enc:aesgcm:v1:b:", 20);
    free(out);
    assert_int_equal(sk_enc_seal(any, "x", 1, NULL, 0, &out, &n), SK_OK);
    assert_memory_equal(out, "k8s:enc:secretbox:v1:d:", 23);
    free(out);
    /* events: identity, listed first */
    assert_int_equal(sk_enc_seal(sk_enc_lookup(c, "", "events"), "x", 1, NULL, 0, &out, &n), SK_OK);
    assert_string_equal(out, "x");
    free(out);
    /* a value written by the second element's key reads through secrets' chain */
    sk_enc_config *sb = secrets_config("[{secretbox: {keys: [{name: c, secret: " KEY32 "}]}}]");
    char *s = seal(sb, PLAIN, strlen(PLAIN));
    bool stale = false;
    char *msg = NULL;
    assert_int_equal(sk_enc_open(sec, s, strlen(s), NULL, 0, &out, &n, &stale, &msg), SK_OK);
    assert_string_equal(out, PLAIN);
    assert_true(stale);
    free(out);
    free(s);
    sk_enc_config_free(sb);
    sk_enc_config_free(c);
    /* nothing configured for a resource: NULL, kept plain */
    c = secrets_config("[{identity: {}}]");
    assert_null(sk_enc_lookup(c, "", "configmaps"));
    assert_null(sk_enc_lookup(c, "apps", "secrets"));
    sk_enc_config_free(c);
    /* "*." is the core group only */
    c = parse_ok("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"
                 "resources:\n- resources: ['*.']\n  providers: [{identity: {}}]\n");
    assert_non_null(sk_enc_lookup(c, "", "pods"));
    assert_null(sk_enc_lookup(c, "apps", "deployments"));
    sk_enc_config_free(c);
}

/* ---- configuration errors, in kube's words ---- */

#define HEAD "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"

static void test_config_errors(void **state)
{
    (void)state;
    expect_err("", "error while parsing file: encryption provider configuration is empty");
    expect_err(HEAD, "error while parsing file: resources: Required value: at least one "
                     "resources is required");
    expect_err("apiVersion: v1\nkind: ConfigMap\n",
               "error while parsing file: no kind \"ConfigMap\" is registered for version \"v1\" "
               "(want apiserver.config.k8s.io/v1 EncryptionConfiguration)");
    expect_err(HEAD "resources:\n- resources: []\n  providers: []\n",
               "error while parsing file: [resources[0].resources: Required value: at least one "
               "resources[0].resources is required, resources[0].providers: Required value: at "
               "least one resources[0].providers is required]");
    /* unknown provider: the element holds none kube knows */
    expect_err(HEAD "resources:\n- resources: [secrets]\n  providers: [{aesctr: {}}]\n",
               "error while parsing file: resources[0].providers[0]: Invalid value: "
               "\"{\\\"aesctr\\\":{}}\": provider does not contain any of the expected providers: "
               "KMS, AESGCM, AESCBC, Secretbox, Identity");
    expect_err(HEAD "resources:\n- resources: [secrets]\n  providers: [{identity: {}, aescbc: "
                    "{keys: [{name: a, secret: " KEY32 "}]}}]\n",
               "error while parsing file: resources[0].providers[0]: Invalid value: "
               "\"{\\\"identity\\\":{},\\\"aescbc\\\":{\\\"keys\\\":[{\\\"name\\\":\\\"a\\\","
               "\\\"secret\\\":\\\"" KEY32 "\\\"}]}}\": more than one provider specified in a "
               "single element, should split into different list elements");
    /* keys: length, base64, names, none; the secret is never quoted */
    expect_err(HEAD "resources:\n- resources: [secrets]\n  providers:\n"
                    "  - aescbc: {keys: [{name: a, secret: c2VjcmV0ISE=}]}\n"
                    "  - secretbox: {keys: [{name: b, secret: " KEY16 "}]}\n"
                    "  - aesgcm: {keys: [{secret: '%%%'}, {name: d}]}\n"
                    "  - aesgcm: {keys: []}\n",
               "error while parsing file: [resources[0].providers[0].aescbc.keys[0].secret: "
               "Invalid value: \"REDACTED\": secret is not of the expected length, got 8, "
               "expected one of [16 24 32], "
               "resources[0].providers[1].secretbox.keys[0].secret: Invalid value: \"REDACTED\": "
               "secret is not of the expected length, got 16, expected one of [32], "
               "resources[0].providers[2].aesgcm.keys[0].name: Required value: name is a "
               "mandatory field for a key, resources[0].providers[2].aesgcm.keys[0].secret: "
               "Invalid value: \"REDACTED\": secrets must be base64 encoded, "
               "resources[0].providers[2].aesgcm.keys[1].secret: Required value: secret is a "
               "mandatory field for a key, resources[0].providers[3].aesgcm.keys: Required "
               "value: at least one keys is required]");
}

static void test_config_resource_errors(void **state)
{
    (void)state;
    /* one name per element: in one list, "*" would also overlap the others */
    expect_err(HEAD "resources:\n"
                    "- {resources: [Secrets], providers: [{identity: {}}]}\n"
                    "- {resources: ['*'], providers: [{identity: {}}]}\n"
                    "- {resources: [serviceipallocations], providers: [{identity: {}}]}\n"
                    "- {resources: ['*.events.k8s.io'], providers: [{identity: {}}]}\n"
                    "- {resources: ['*.extensions'], providers: [{identity: {}}]}\n"
                    "- {resources: ['secrets.*'], providers: [{identity: {}}]}\n",
               "error while parsing file: [resources[0].resources[0]: Invalid value: \"Secrets\": "
               "resource name should not contain capital letters, resources[1].resources[0]: "
               "Invalid value: \"*\": use '*.' to encrypt all the resources from core API group "
               "or *.* to encrypt all resources, resources[2].resources[0]: Invalid value: "
               "\"serviceipallocations\": resources which do not have REST API/s cannot be "
               "encrypted, resources[3].resources[0]: Invalid value: \"*.events.k8s.io\": "
               "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use "
               "'events' instead in the config file, resources[4].resources[0]: Invalid value: "
               "\"*.extensions\": 'extensions' group has been removed and cannot be used for "
               "encryption, resources[5].resources[0]: Invalid value: \"secrets.*\": encrypting "
               "the same resource across groups is not supported]");
    expect_err(HEAD "resources:\n- resources: [secrets, secrets]\n  providers: [{identity: {}}]\n",
               "error while parsing file: resources[0].resources: Invalid value: "
               "[]string{\"secrets\", \"secrets\"}: the same resource cannot be specified "
               "multiple times");
    expect_err(HEAD "resources:\n- resources: [secrets, '*.']\n  providers: [{identity: {}}]\n",
               "error while parsing file: resources[0].resources: Invalid value: "
               "[]string{\"secrets\", \"*.\"}: using overlapping resources such as 'secrets' and "
               "'*.' in the same resource list is not allowed as they will be masked");
    /* across elements: a wildcard masks what a later element lists */
    expect_err(HEAD "resources:\n- resources: ['*.apps']\n  providers: [{identity: {}}]\n"
                    "- resources: [deployments.apps]\n  providers: [{identity: {}}]\n",
               "error while building transformers: resource \"deployments.apps\" is masked by "
               "earlier rule \"*.apps\"");
    expect_err(HEAD "resources:\n- resources: ['*.*']\n  providers: [{identity: {}}]\n"
                    "- resources: [secrets]\n  providers: [{identity: {}}]\n",
               "error while building transformers: resource \"secrets\" is masked by earlier "
               "rule \"*.*\"");
    expect_err(HEAD "resources:\n- resources: ['*.']\n  providers: [{identity: {}}]\n"
                    "- resources: [configmaps]\n  providers: [{identity: {}}]\n",
               "error while building transformers: resource \"configmaps\" is masked by "
               "earlier rule \"*.\"");
    /* kms waits for a later version */
    expect_err(HEAD "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, "
                    "name: k, endpoint: 'unix:///kms.sock'}}]\n",
               "error while parsing file: resources[0].providers[0].kms: Forbidden: the kms "
               "provider is not supported by sqlkube yet");
    /* wrong types and broken YAML */
    expect_err(HEAD "resources: secrets\n",
               "error while parsing file: resources: Invalid value: must be a list");
    char *msg = parse_err(HEAD "resources: [\n");
    assert_memory_equal(msg, "error while parsing file: error converting YAML to JSON: yaml: ",
                        strlen("error while parsing file: error converting YAML to JSON: yaml: "));
    free(msg);
    /* a key longer than any provider takes */
    expect_err(HEAD "resources:\n- resources: [secrets]\n  providers: [{secretbox: {keys: [{name: "
                    "a, secret: AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJw==}]}}]\n",
               "error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: "
               "Invalid value: \"REDACTED\": secret is not of the expected length, got 40, "
               "expected one of [32]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_aescbc),
        cmocka_unit_test(test_known_aesgcm),
        cmocka_unit_test(test_known_secretbox),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_plaintext_not_stored),
        cmocka_unit_test(test_wrong_key),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_tampered),
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_resource_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

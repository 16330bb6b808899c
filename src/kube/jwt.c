/*
 * jwt.c - see jwt.h.
 *
 * Parsing is strict so a token has one reading: exactly two dots, each
 * part non-empty base64url without padding, a JSON object header and
 * payload. The signature is checked over the bytes as sent (header.payload),
 * never over a re-encoding. Only RS256 is accepted: the header's alg is
 * checked before any key is tried, so "none" or an HMAC keyed with a
 * public key (the classic JWS confusions) cannot pass.
 */
#include "kube/jwt.h"

#include "core/buf.h"
#include "core/check.h"

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 64
#define MAX_TOKEN_BYTES (64 * 1024) /* kube's tokens are ~1 KiB; anything huge is not ours */

struct sk_jwt_keys {
    gnutls_privkey_t signer; /* NULL: verify only */
    char *signer_kid;
    gnutls_pubkey_t pub[MAX_KEYS];
    size_t n_pub;
};

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *sk_jwt_b64url_encode(const void *data, size_t n)
{
    const unsigned char *p = data;
    char *out = malloc(n / 3 * 4 + 5);
    SK_CHECK_ALLOC(out);
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
        out[o++] = b64url[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
    }
    out[o] = '\0';
    return out;
}

static int b64url_value(char c)
{
    const char *at = c ? strchr(b64url, c) : NULL;
    return at ? (int)(at - b64url) : -1;
}

unsigned char *sk_jwt_b64url_decode(const char *s, size_t len, size_t *n_out)
{
    if (len % 4 == 1)
        return NULL;
    unsigned char *out = malloc(len / 4 * 3 + 3);
    SK_CHECK_ALLOC(out);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value(s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    /* the unused low bits of the last character must be zero (one encoding per byte string) */
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    *n_out = o;
    return out;
}

/* ---- keys ---- */

static char *key_id(gnutls_pubkey_t pub)
{
    gnutls_datum_t der = {0};
    unsigned char sum[32];
    if (gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &der) < 0)
        return NULL;
    gnutls_hash_fast(GNUTLS_DIG_SHA256, der.data, der.size, sum);
    gnutls_free(der.data);
    return sk_jwt_b64url_encode(sum, sizeof sum);
}

static int is_rsa(gnutls_pubkey_t pub)
{
    return gnutls_pubkey_get_pk_algorithm(pub, NULL) == GNUTLS_PK_RSA;
}

/* The public key of one PEM block (public key, private key, certificate). */
static gnutls_pubkey_t block_key(const char *block, size_t len)
{
    gnutls_datum_t d = {(unsigned char *)block, (unsigned)len};
    gnutls_pubkey_t pub = NULL;
    gnutls_privkey_t priv = NULL;
    gnutls_x509_crt_t crt = NULL;
    if (gnutls_pubkey_init(&pub) < 0)
        return NULL;
    if (gnutls_pubkey_import(pub, &d, GNUTLS_X509_FMT_PEM) == 0)
        goto out;
    if (gnutls_privkey_init(&priv) == 0 &&
        gnutls_privkey_import_x509_raw(priv, &d, GNUTLS_X509_FMT_PEM, NULL, 0) == 0 &&
        gnutls_pubkey_import_privkey(pub, priv, 0, 0) == 0)
        goto out;
    if (gnutls_x509_crt_init(&crt) == 0 &&
        gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) == 0 &&
        gnutls_pubkey_import_x509(pub, crt, 0) == 0)
        goto out;
    gnutls_pubkey_deinit(pub);
    pub = NULL;
out:
    if (priv)
        gnutls_privkey_deinit(priv);
    if (crt)
        gnutls_x509_crt_deinit(crt);
    return pub;
}

/* Adds every key of a PEM text to k. */
static sk_err add_pem(sk_jwt_keys *k, const char *pem, size_t index, char **errmsg)
{
    const char *p = pem;
    size_t found = 0;
    while ((p = strstr(p, "-----BEGIN ")) != NULL) {
        const char *end = strstr(p, "-----END ");
        const char *stop = end ? strstr(end + 9, "-----") : NULL;
        if (!stop)
            break;
        stop += 5;
        gnutls_pubkey_t pub = block_key(p, (size_t)(stop - p));
        if (pub && !is_rsa(pub)) {
            gnutls_pubkey_deinit(pub);
            if (asprintf(errmsg, "key file %zu: block %zu is not an RSA key (only RS256 is "
                         "supported)", index + 1, found + 1) < 0)
                *errmsg = NULL;
            return SK_ERR_INVALID;
        }
        if (pub) {
            if (k->n_pub == MAX_KEYS) {
                gnutls_pubkey_deinit(pub);
                if (asprintf(errmsg, "more than %d verification keys", MAX_KEYS) < 0)
                    *errmsg = NULL;
                return SK_ERR_INVALID;
            }
            k->pub[k->n_pub++] = pub;
            found++;
        }
        p = stop;
    }
    if (found == 0) {
        if (asprintf(errmsg, "key file %zu holds no public key, RSA private key or certificate",
                     index + 1) < 0)
            *errmsg = NULL;
        return SK_ERR_INVALID;
    }
    return SK_OK;
}

sk_err sk_jwt_keys_new(const char *signing_pem, const char *const *verify_pems, size_t n,
                       sk_jwt_keys **out, char **errmsg)
{
    sk_err err = SK_ERR_INVALID;
    sk_jwt_keys *k = calloc(1, sizeof *k);
    SK_CHECK_ALLOC(k);
    if (signing_pem) {
        gnutls_datum_t d = {(unsigned char *)signing_pem, (unsigned)strlen(signing_pem)};
        gnutls_pubkey_t pub = NULL;
        if (gnutls_privkey_init(&k->signer) < 0 ||
            gnutls_privkey_import_x509_raw(k->signer, &d, GNUTLS_X509_FMT_PEM, NULL, 0) < 0 ||
            gnutls_privkey_get_pk_algorithm(k->signer, NULL) != GNUTLS_PK_RSA ||
            gnutls_pubkey_init(&pub) < 0 || gnutls_pubkey_import_privkey(pub, k->signer, 0, 0) < 0) {
            if (pub)
                gnutls_pubkey_deinit(pub);
            *errmsg = strdup("the signing key is not a PEM RSA private key");
            goto out;
        }
        k->signer_kid = key_id(pub);
        if (n == 0)
            k->pub[k->n_pub++] = pub;
        else
            gnutls_pubkey_deinit(pub);
    }
    for (size_t i = 0; i < n; i++)
        if ((err = add_pem(k, verify_pems[i], i, errmsg)) != SK_OK)
            goto out;
    if (k->n_pub == 0) {
        *errmsg = strdup("no key to verify tokens with");
        err = SK_ERR_INVALID;
        goto out;
    }
    err = SK_OK;
    *out = k;
    k = NULL;
out:
    sk_jwt_keys_free(k);
    return err;
}

void sk_jwt_keys_free(sk_jwt_keys *k)
{
    if (!k)
        return;
    if (k->signer)
        gnutls_privkey_deinit(k->signer);
    for (size_t i = 0; i < k->n_pub; i++)
        gnutls_pubkey_deinit(k->pub[i]);
    free(k->signer_kid);
    free(k);
}

int sk_jwt_keys_can_sign(const sk_jwt_keys *k)
{
    return k && k->signer;
}

/* ---- tokens ---- */

static char *b64_json(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    SK_CHECK_ALLOC(text);
    char *enc = sk_jwt_b64url_encode(text, strlen(text));
    free(text);
    return enc;
}

char *sk_jwt_sign(const sk_jwt_keys *k, const json_t *claims)
{
    if (!sk_jwt_keys_can_sign(k))
        return NULL;
    json_t *header = json_pack("{s:s}", "alg", "RS256");
    if (k->signer_kid)
        json_object_set_new(header, "kid", json_string(k->signer_kid));
    char *h = b64_json(header), *c = b64_json(claims);
    json_decref(header);
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "%s.%s", h, c);
    free(h);
    free(c);
    gnutls_datum_t data = {(unsigned char *)b.data, (unsigned)b.len}, sig = {0};
    char *out = NULL;
    if (gnutls_privkey_sign_data(k->signer, GNUTLS_DIG_SHA256, 0, &data, &sig) == 0) {
        char *s = sk_jwt_b64url_encode(sig.data, sig.size);
        gnutls_free(sig.data);
        sk_buf_printf(&b, ".%s", s);
        free(s);
        out = strdup(b.data);
        SK_CHECK_ALLOC(out);
    }
    sk_buf_free(&b);
    return out;
}

typedef struct parts {
    const char *p[3];
    size_t len[3];
} parts;

static int split(const char *token, parts *out)
{
    size_t total = strnlen(token, MAX_TOKEN_BYTES + 1);
    if (total > MAX_TOKEN_BYTES)
        return 0;
    const char *p = token;
    for (int i = 0; i < 3; i++) {
        const char *dot = i < 2 ? strchr(p, '.') : p + strlen(p);
        if (!dot || dot == p)
            return 0;
        out->p[i] = p;
        out->len[i] = (size_t)(dot - p);
        p = dot + 1;
    }
    return !strchr(out->p[2], '.');
}

/* Part i decoded as a JSON object, new reference, or NULL. */
static json_t *part_json(const parts *t, int i)
{
    size_t n;
    unsigned char *raw = sk_jwt_b64url_decode(t->p[i], t->len[i], &n);
    if (!raw)
        return NULL;
    json_t *v = json_loadb((const char *)raw, n, JSON_REJECT_DUPLICATES, NULL);
    free(raw);
    if (!json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

json_t *sk_jwt_peek(const char *token)
{
    parts t;
    if (!split(token, &t))
        return NULL;
    json_t *header = part_json(&t, 0);
    json_t *claims = header ? part_json(&t, 1) : NULL;
    json_decref(header);
    return claims;
}

sk_err sk_jwt_verify(const sk_jwt_keys *k, const char *token, json_t **claims_out,
                     const char **why)
{
    parts t;
    json_t *header = NULL;
    json_t *claims = NULL;
    unsigned char *sig = NULL;
    size_t sig_len = 0;
    sk_err err = SK_ERR_UNAUTHORIZED;
    *why = "invalid token";
    if (!split(token, &t) || !(header = part_json(&t, 0)) || !(claims = part_json(&t, 1)))
        goto out;
    const char *alg = json_string_value(json_object_get(header, "alg"));
    if (!alg || strcmp(alg, "RS256") != 0) {
        *why = "invalid signature algorithm";
        goto out;
    }
    if (!(sig = sk_jwt_b64url_decode(t.p[2], t.len[2], &sig_len)))
        goto out;
    gnutls_datum_t data = {(unsigned char *)t.p[0], (unsigned)(t.len[0] + 1 + t.len[1])};
    gnutls_datum_t s = {sig, (unsigned)sig_len};
    *why = "invalid signature";
    for (size_t i = 0; i < k->n_pub; i++) {
        if (gnutls_pubkey_verify_data2(k->pub[i], GNUTLS_SIGN_RSA_SHA256, 0, &data, &s) >= 0) {
            *claims_out = claims;
            claims = NULL;
            *why = NULL;
            err = SK_OK;
            break;
        }
    }
out:
    free(sig);
    json_decref(header);
    json_decref(claims);
    return err;
}

/*
 * token.c - encoding, signing and verification of list continue tokens
 * (format and rationale in token.h).
 *
 * Decoding verifies the MAC before looking at any field, so a tampered token
 * is always rejected the same way and the parser only ever sees bytes this
 * server (or a peer with the same secret) wrote. The parser is still strict
 * (exact lengths, no trailing bytes, no NUL inside a field) because a peer
 * running another format version shares the secret.
 *
 * base64url is hand-written rather than GnuTLS's base64, which uses the
 * standard alphabet with padding ('+', '/' and '=' need escaping in a query
 * string). The decoder accepts exactly one spelling per token (no padding,
 * zero unused trailing bits), so tokens can be compared as strings.
 */
#include "kube/token.h"

#include "core/buf.h"
#include "core/check.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_VERSION 1
#define TOKEN_MAC_LEN 16
#define TOKEN_SECRET_LEN 32
/* version + rev + four empty length-prefixed strings + MAC */
#define TOKEN_MIN_LEN (1 + 8 + 4 * 2 + TOKEN_MAC_LEN)

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64url_encode(const unsigned char *in, size_t n)
{
    char *out = malloc(n / 3 * 4 + 4 + 1);
    SK_CHECK_ALLOC(out);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8) | in[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out[o++] = b64url_alphabet[(acc >> bits) & 63];
        }
    }
    if (bits > 0)
        out[o++] = b64url_alphabet[(acc << (6 - bits)) & 63];
    out[o] = '\0';
    return out;
}

/* The 6-bit value of c, or -1 if c is not in the base64url alphabet. */
static int b64url_value(unsigned char c)
{
    int v = -1;
    if (c >= 'A' && c <= 'Z')
        v = c - 'A';
    else if (c >= 'a' && c <= 'z')
        v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
        v = c - '0' + 52;
    else if (c == '-')
        v = 62;
    else if (c == '_')
        v = 63;
    return v;
}

/* Decodes s into a new buffer *out of *n_out bytes. Fails (-1) on a character
 * outside the alphabet, an impossible length or non-zero unused bits. */
static int b64url_decode(const char *s, unsigned char **out, size_t *n_out)
{
    int rc = -1;
    size_t len = strlen(s);
    unsigned char *buf = NULL;
    if (len % 4 == 1)
        goto out;
    buf = malloc(len / 4 * 3 + 3);
    SK_CHECK_ALLOC(buf);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value((unsigned char)s[i]);
        if (v < 0)
            goto out;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (unsigned char)(acc >> bits);
        }
        acc &= (1u << bits) - 1;
    }
    if (acc != 0)
        goto out;
    *out = buf;
    *n_out = o;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    return rc;
}

static void put_str(sk_buf *b, const char *s)
{
    size_t len = strlen(s);
    SK_CHECK(len <= UINT16_MAX);
    unsigned char hdr[2] = {(unsigned char)(len >> 8), (unsigned char)len};
    sk_buf_append(b, hdr, sizeof hdr);
    sk_buf_append(b, s, len);
}

static void token_mac(const unsigned char *secret, const void *data, size_t len,
                      unsigned char mac[32])
{
    /* Fails only if SHA-256 is unavailable, which no usable build allows. */
    SK_CHECK(gnutls_hmac_fast(GNUTLS_MAC_SHA256, secret, TOKEN_SECRET_LEN, data, len, mac) == 0);
}

char *sk_token_encode(const sk_token *t, const unsigned char secret[32])
{
    SK_CHECK(t->rev > 0);
    sk_buf raw = SK_BUF_INIT;
    unsigned char head[9] = {TOKEN_VERSION};
    for (int i = 0; i < 8; i++)
        head[1 + i] = (unsigned char)((uint64_t)t->rev >> (56 - 8 * i));
    sk_buf_append(&raw, head, sizeof head);
    put_str(&raw, t->resource);
    put_str(&raw, t->ns);
    put_str(&raw, t->last_ns);
    put_str(&raw, t->last_name);
    unsigned char mac[32];
    token_mac(secret, raw.data, raw.len, mac);
    sk_buf_append(&raw, mac, TOKEN_MAC_LEN);
    char *s = b64url_encode((const unsigned char *)raw.data, raw.len);
    sk_buf_free(&raw);
    return s;
}

/* A cursor over the signed payload. */
typedef struct reader {
    const unsigned char *p;
    size_t left;
} reader;

/* Reads one length-prefixed field into a new string; -1 if it overruns the
 * payload or holds a NUL (it could not round-trip through a C string). */
static int read_str(reader *r, char **out)
{
    int rc = -1;
    if (r->left < 2)
        goto out;
    size_t len = (size_t)r->p[0] << 8 | r->p[1];
    if (r->left - 2 < len || memchr(r->p + 2, '\0', len))
        goto out;
    char *s = malloc(len + 1);
    SK_CHECK_ALLOC(s);
    memcpy(s, r->p + 2, len);
    s[len] = '\0';
    r->p += 2 + len;
    r->left -= 2 + len;
    *out = s;
    rc = 0;
out:
    return rc;
}

sk_err sk_token_decode(const char *s, const unsigned char secret[32], sk_token *out, char **errmsg)
{
    sk_err err = SK_ERR_BAD_REQUEST;
    const char *why = NULL;
    unsigned char *raw = NULL;
    size_t n = 0;
    sk_token t = {0};
    if (b64url_decode(s, &raw, &n) < 0) {
        why = "illegal base64 data";
        goto out;
    }
    if (n < TOKEN_MIN_LEN) {
        why = "token is truncated";
        goto out;
    }
    unsigned char mac[32];
    token_mac(secret, raw, n - TOKEN_MAC_LEN, mac);
    /* Constant time, so response timing does not reveal how many leading
     * MAC bytes of a guess were right. */
    if (gnutls_memcmp(mac, raw + n - TOKEN_MAC_LEN, TOKEN_MAC_LEN) != 0) {
        why = "signature does not match (the token was altered or issued by another server)";
        goto out;
    }
    if (raw[0] != TOKEN_VERSION) {
        why = "server and client have different versions";
        goto out;
    }
    uint64_t rev = 0;
    for (int i = 0; i < 8; i++)
        rev = rev << 8 | raw[1 + i];
    t.rev = (int64_t)rev;
    if (t.rev <= 0) {
        why = "incorrect encoded start resourceVersion";
        goto out;
    }
    reader r = {raw + 9, n - 9 - TOKEN_MAC_LEN};
    if (read_str(&r, &t.resource) < 0 || read_str(&r, &t.ns) < 0 || read_str(&r, &t.last_ns) < 0 ||
        read_str(&r, &t.last_name) < 0) {
        why = "malformed key";
        goto out;
    }
    if (r.left != 0) {
        why = "trailing bytes after the key";
        goto out;
    }
    *out = t;
    memset(&t, 0, sizeof t);
    err = SK_OK;
out:
    if (err != SK_OK) {
        size_t cap = strlen(why) + 64;
        char *msg = malloc(cap);
        SK_CHECK_ALLOC(msg);
        snprintf(msg, cap, "continue key is not valid: %s", why);
        *errmsg = msg;
    }
    sk_token_clear(&t);
    free(raw);
    return err;
}

void sk_token_clear(sk_token *t)
{
    free(t->resource);
    free(t->ns);
    free(t->last_ns);
    free(t->last_name);
    memset(t, 0, sizeof *t);
}

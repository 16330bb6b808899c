/*
 * fuzz_jwt.c - libFuzzer target: the ServiceAccount token reader
 * (kube/jwt, kube/satoken) on arbitrary bytes, taken both as a token and,
 * when they are a JSON object, as its claims.
 *
 * Invariants checked: no input verifies unless it was signed with the key
 * (a key made for this process, so none ever does); a peeked payload is an
 * object; claims that pass the check name a namespace, a ServiceAccount
 * and its uid, at most as many audiences as asked for, and a bound object
 * with a name and uid when one is named; any object signed and verified
 * comes back equal.
 */
#include "kube/jwt.h"
#include "kube/satoken.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ISS "https://kubernetes.default.svc.cluster.local"

static sk_jwt_keys *keys(void)
{
    static sk_jwt_keys *k;
    if (k)
        return k;
    gnutls_x509_privkey_t raw;
    gnutls_datum_t d = {0};
    if (gnutls_x509_privkey_init(&raw) < 0 ||
        gnutls_x509_privkey_generate(raw, GNUTLS_PK_RSA, 2048, 0) < 0 ||
        gnutls_x509_privkey_export2(raw, GNUTLS_X509_FMT_PEM, &d) < 0)
        abort();
    char *pem = strndup((char *)d.data, d.size);
    char *err = NULL;
    if (sk_jwt_keys_new(pem, NULL, 0, &k, &err) != SK_OK)
        abort();
    gnutls_free(d.data);
    gnutls_x509_privkey_deinit(raw);
    free(pem);
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    json_t *claims = NULL;
    const char *why = NULL;
    if (sk_jwt_verify(keys(), text, &claims, &why) == SK_OK)
        abort();
    if (claims || !why)
        abort();
    json_t *peek = sk_jwt_peek(text);
    if (peek && !json_is_object(peek))
        abort();
    json_decref(peek);

    json_t *obj = json_loadb(text, size, 0, NULL);
    if (json_is_object(obj)) {
        static const char *const auds[] = {ISS, "api"};
        const char *out[2];
        size_t m = 0;
        sk_satoken t;
        char *msg = NULL;
        sk_err err = sk_satoken_check(obj, ISS, 1700000000, auds, 2, &t, out, &m, &msg);
        if (err == SK_OK) {
            if (msg || !t.ns || !*t.ns || !t.name || !*t.name || !t.uid || m == 0 || m > 2)
                abort();
            if (t.bound_kind && (!t.bound_name || !t.bound_uid))
                abort();
        } else if (err != SK_ERR_UNAUTHORIZED || !msg) {
            abort();
        }
        free(msg);
        char *token = sk_jwt_sign(keys(), obj);
        if (!token || sk_jwt_verify(keys(), token, &claims, &why) != SK_OK ||
            !json_equal(claims, obj))
            abort();
        json_decref(claims);
        free(token);
    }
    json_decref(obj);
    free(text);
    return 0;
}

/*
 * pki.c - see pki.h.
 *
 * Every GnuTLS object lives only inside one function; what leaves is PEM
 * text, the form MHD, the kubeconfig and the files all take. One exit per
 * function: the objects are released at `out` on every path.
 */
#include "http/pki.h"
#include "core/check.h"
#include "core/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CA_DAYS 3650
#define LEAF_DAYS 365
#define CLOCK_SKEW_S 3600 /* certificates are valid from an hour ago: peers' clocks drift */
#define MAX_PEM_BYTES (1024 * 1024)

static void __attribute__((format(printf, 2, 3))) set_error(char **errmsg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(errmsg, fmt, ap) < 0)
        *errmsg = NULL;
    va_end(ap);
}

static char *read_file(const char *path, char **errmsg)
{
    size_t len;
    char *text = sk_read_file(path, MAX_PEM_BYTES, &len);
    if (!text)
        set_error(errmsg, "cannot read %s: %s", path,
                  errno == EFBIG ? "over 1 MiB" : strerror(errno));
    return text;
}

/* Writes text to path atomically, mode 0600 from creation. */
static int write_private(const char *path, const char *text, char **errmsg)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0 || close(fd) < 0 ||
        rename(tmp, path) < 0) {
        set_error(errmsg, "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            unlink(tmp);
        return -1;
    }
    return 0;
}

static char *datum_text(gnutls_datum_t *d)
{
    char *s = malloc(d->size + 1);
    SK_CHECK_ALLOC(s);
    memcpy(s, d->data, d->size);
    s[d->size] = '\0';
    gnutls_free(d->data);
    d->data = NULL;
    return s;
}

static char *export_cert(gnutls_x509_crt_t crt)
{
    gnutls_datum_t d = {0};
    if (gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d) < 0)
        return NULL;
    return datum_text(&d);
}

static char *export_key(gnutls_x509_privkey_t key)
{
    gnutls_datum_t d = {0};
    if (gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN, &d) <
        0)
        return NULL;
    return datum_text(&d);
}

static int import_cert(const char *pem, gnutls_x509_crt_t *out)
{
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
    if (gnutls_x509_crt_init(out) < 0)
        return -1;
    if (gnutls_x509_crt_import(*out, &d, GNUTLS_X509_FMT_PEM) < 0) {
        gnutls_x509_crt_deinit(*out);
        return -1;
    }
    return 0;
}

static int import_key(const char *pem, gnutls_x509_privkey_t *out)
{
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
    if (gnutls_x509_privkey_init(out) < 0)
        return -1;
    if (gnutls_x509_privkey_import2(*out, &d, GNUTLS_X509_FMT_PEM, NULL, 0) < 0) {
        gnutls_x509_privkey_deinit(*out);
        return -1;
    }
    return 0;
}

typedef struct leaf_spec {
    const char *cn;
    const char *const *orgs;
    size_t n_orgs;
    const char *const *sans; /* serving certificates only */
    size_t n_sans;
    int is_ca, is_server;
} leaf_spec;

/* A new P-256 key (*key, stays NULL on failure) that GnuTLS writes as RFC
 * 5915 says: a 32-byte private scalar. GnuTLS 3.7 writes the scalar as a
 * signed integer's bytes, 33 with a leading zero when its top bit is set
 * and 31 when its top byte is zero, and strict readers of the key file
 * (Python's cryptography, for one) refuse both: about half of all keys
 * would be unreadable to them, so those keys are never kept. */
static int generate_ec_key(gnutls_x509_privkey_t *key)
{
    for (;;) {
        gnutls_x509_privkey_t k = NULL;
        gnutls_datum_t x = {0}, y = {0}, scalar = {0};
        gnutls_ecc_curve_t curve;
        if (gnutls_x509_privkey_init(&k) < 0 ||
            gnutls_x509_privkey_generate(k, GNUTLS_PK_ECDSA,
                                         GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
            gnutls_x509_privkey_export_ecc_raw(k, &curve, &x, &y, &scalar) < 0) {
            gnutls_x509_privkey_deinit(k);
            return -1;
        }
        int conforming = scalar.size == 32;
        gnutls_free(x.data);
        gnutls_free(y.data);
        gnutls_free(scalar.data);
        if (conforming) {
            *key = k;
            return 0;
        }
        gnutls_x509_privkey_deinit(k);
    }
}

/*
 * A new key and a certificate for it, signed by ca/ca_key (NULL: itself).
 * On success *cert_pem and *key_pem are new strings.
 */
static int issue(const leaf_spec *spec, gnutls_x509_crt_t ca, gnutls_x509_privkey_t ca_key,
                 char **cert_pem, char **key_pem)
{
    gnutls_x509_privkey_t key = NULL;
    gnutls_x509_crt_t crt = NULL;
    int rc = -1;
    unsigned char serial[16], keyid[64];
    size_t keyid_len = sizeof keyid;
    if (generate_ec_key(&key) < 0 || gnutls_x509_crt_init(&crt) < 0)
        goto out;
    sk_random_bytes(serial, sizeof serial);
    serial[0] &= 0x7f; /* a positive serial */
    time_t now = time(NULL);
    int days = spec->is_ca ? CA_DAYS : LEAF_DAYS;
    if (gnutls_x509_crt_set_version(crt, 3) < 0 ||
        gnutls_x509_crt_set_serial(crt, serial, sizeof serial) < 0 ||
        gnutls_x509_crt_set_activation_time(crt, now - CLOCK_SKEW_S) < 0 ||
        gnutls_x509_crt_set_expiration_time(crt, now + (time_t)days * 86400) < 0 ||
        gnutls_x509_crt_set_key(crt, key) < 0 ||
        gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, spec->cn,
                                      (unsigned)strlen(spec->cn)) < 0 ||
        gnutls_x509_crt_set_basic_constraints(crt, spec->is_ca, -1) < 0)
        goto out;
    for (size_t i = 0; i < spec->n_orgs; i++)
        if (gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0,
                                          spec->orgs[i], (unsigned)strlen(spec->orgs[i])) < 0)
            goto out;
    unsigned usage = spec->is_ca ? GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
                                       GNUTLS_KEY_DIGITAL_SIGNATURE
                                 : GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT;
    if (gnutls_x509_crt_set_key_usage(crt, usage) < 0 ||
        gnutls_x509_crt_get_key_id(crt, 0, keyid, &keyid_len) < 0 ||
        gnutls_x509_crt_set_subject_key_id(crt, keyid, keyid_len) < 0)
        goto out;
    if (!spec->is_ca &&
        gnutls_x509_crt_set_key_purpose_oid(
            crt, spec->is_server ? GNUTLS_KP_TLS_WWW_SERVER : GNUTLS_KP_TLS_WWW_CLIENT, 0) < 0)
        goto out;
    for (size_t i = 0; i < spec->n_sans; i++) {
        unsigned char ip[16];
        const char *name = spec->sans[i];
        int r;
        if (inet_pton(AF_INET, name, ip) == 1)
            r = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4,
                                                     GNUTLS_FSAN_APPEND);
        else if (inet_pton(AF_INET6, name, ip) == 1)
            r = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 16,
                                                     GNUTLS_FSAN_APPEND);
        else
            r = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, name,
                                                     (unsigned)strlen(name), GNUTLS_FSAN_APPEND);
        if (r < 0)
            goto out;
    }
    if (ca) {
        unsigned char ca_id[64];
        size_t ca_id_len = sizeof ca_id;
        unsigned critical;
        if (gnutls_x509_crt_get_subject_key_id(ca, ca_id, &ca_id_len, &critical) >= 0 &&
            gnutls_x509_crt_set_authority_key_id(crt, ca_id, ca_id_len) < 0)
            goto out;
    }
    if (gnutls_x509_crt_sign2(crt, ca ? ca : crt, ca ? ca_key : key, GNUTLS_DIG_SHA256, 0) < 0)
        goto out;
    char *c = export_cert(crt), *k = export_key(key);
    if (!c || !k) {
        free(c);
        free(k);
        goto out;
    }
    *cert_pem = c;
    *key_pem = k;
    rc = 0;
out:
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (key)
        gnutls_x509_privkey_deinit(key);
    return rc;
}

/* The CA from the flags' files, or DIR/ca.crt and ca.key, made on first start. */
static int load_ca(const sk_pki_config *cfg, sk_pki *p, char **ca_key_pem, char **errmsg)
{
    char crt_path[4200], key_path[4200];
    if (cfg->ca_file) {
        if (!(p->ca_pem = read_file(cfg->ca_file, errmsg)))
            return -1;
        if (cfg->ca_key_file && !(*ca_key_pem = read_file(cfg->ca_key_file, errmsg)))
            return -1;
        return 0;
    }
    snprintf(crt_path, sizeof crt_path, "%s/ca.crt", cfg->dir);
    snprintf(key_path, sizeof key_path, "%s/ca.key", cfg->dir);
    if (access(crt_path, F_OK) == 0 || access(key_path, F_OK) == 0) {
        if (!(p->ca_pem = read_file(crt_path, errmsg)) ||
            !(*ca_key_pem = read_file(key_path, errmsg)))
            return -1;
        return 0;
    }
    leaf_spec spec = {.cn = "sqlkube-ca", .is_ca = 1};
    if (issue(&spec, NULL, NULL, &p->ca_pem, ca_key_pem) < 0) {
        set_error(errmsg, "cannot generate a CA");
        return -1;
    }
    /* The key first: a certificate without its key would be taken as given. */
    if (write_private(key_path, *ca_key_pem, errmsg) < 0 ||
        write_private(crt_path, p->ca_pem, errmsg) < 0)
        return -1;
    return 0;
}

int sk_pki_load(const sk_pki_config *cfg, sk_pki *out, char **errmsg)
{
    sk_pki p = {0};
    char *ca_key_pem = NULL;
    gnutls_x509_crt_t ca = NULL;
    gnutls_x509_privkey_t ca_key = NULL;
    int rc = -1;
    if (load_ca(cfg, &p, &ca_key_pem, errmsg) < 0)
        goto out;
    if (import_cert(p.ca_pem, &ca) < 0) {
        ca = NULL;
        set_error(errmsg, "the client CA %s is not a PEM certificate",
                  cfg->ca_file ? cfg->ca_file : "ca.crt");
        goto out;
    }
    if (ca_key_pem && import_key(ca_key_pem, &ca_key) < 0) {
        ca_key = NULL;
        set_error(errmsg, "the client CA key %s is not a PEM private key",
                  cfg->ca_key_file ? cfg->ca_key_file : "ca.key");
        goto out;
    }
    if (cfg->cert_file) {
        if (!(p.serving_cert_pem = read_file(cfg->cert_file, errmsg)) ||
            !(p.serving_key_pem = read_file(cfg->key_file, errmsg)))
            goto out;
    } else {
        if (!ca_key) {
            set_error(errmsg, "--tls-cert-file is needed when the client CA's key is not given "
                              "(--client-ca-key-file)");
            goto out;
        }
        leaf_spec spec = {.cn = "kube-apiserver", .sans = cfg->sans, .n_sans = cfg->n_sans,
                          .is_server = 1};
        char crt_path[4200], key_path[4200];
        snprintf(crt_path, sizeof crt_path, "%s/apiserver.crt", cfg->dir);
        snprintf(key_path, sizeof key_path, "%s/apiserver.key", cfg->dir);
        if (issue(&spec, ca, ca_key, &p.serving_cert_pem, &p.serving_key_pem) < 0) {
            set_error(errmsg, "cannot generate the serving certificate");
            goto out;
        }
        if (write_private(key_path, p.serving_key_pem, errmsg) < 0 ||
            write_private(crt_path, p.serving_cert_pem, errmsg) < 0)
            goto out;
    }
    if (ca_key) {
        static const char *const masters[] = {"system:masters"};
        leaf_spec spec = {.cn = "kubernetes-admin", .orgs = masters, .n_orgs = 1};
        if (issue(&spec, ca, ca_key, &p.admin_cert_pem, &p.admin_key_pem) < 0) {
            set_error(errmsg, "cannot generate the admin client certificate");
            goto out;
        }
    }
    *out = p;
    memset(&p, 0, sizeof p);
    rc = 0;
out:
    if (ca)
        gnutls_x509_crt_deinit(ca);
    if (ca_key)
        gnutls_x509_privkey_deinit(ca_key);
    if (ca_key_pem) {
        explicit_bzero(ca_key_pem, strlen(ca_key_pem));
        free(ca_key_pem);
    }
    sk_pki_clear(&p);
    return rc;
}

void sk_pki_clear(sk_pki *p)
{
    char *keys[] = {p->serving_key_pem, p->admin_key_pem};
    for (size_t i = 0; i < 2; i++)
        if (keys[i])
            explicit_bzero(keys[i], strlen(keys[i]));
    free(p->serving_cert_pem);
    free(p->serving_key_pem);
    free(p->ca_pem);
    free(p->admin_cert_pem);
    free(p->admin_key_pem);
    memset(p, 0, sizeof *p);
}

/* DIR/sa.key, generated when absent. */
static char *default_sa_key(const char *dir, char **errmsg)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sa.key", dir);
    if (access(path, F_OK) == 0)
        return read_file(path, errmsg);
    gnutls_x509_privkey_t key = NULL;
    char *pem = NULL;
    if (gnutls_x509_privkey_init(&key) < 0 ||
        gnutls_x509_privkey_generate(key, GNUTLS_PK_RSA, 2048, 0) < 0 ||
        !(pem = export_key(key))) {
        set_error(errmsg, "cannot generate the service account signing key");
    } else if (write_private(path, pem, errmsg) < 0) {
        explicit_bzero(pem, strlen(pem));
        free(pem);
        pem = NULL;
    }
    if (key)
        gnutls_x509_privkey_deinit(key);
    return pem;
}

int sk_pki_sa_load(const sk_pki_sa_config *cfg, sk_pki_sa *out, char **errmsg)
{
    sk_pki_sa s = {0};
    int rc = -1;
    if (cfg->signing_key_file)
        s.signing_pem = read_file(cfg->signing_key_file, errmsg);
    else if (cfg->n_key_files == 0)
        s.signing_pem = default_sa_key(cfg->dir, errmsg);
    if ((cfg->signing_key_file || cfg->n_key_files == 0) && !s.signing_pem)
        goto out;
    s.verify_pems = calloc(cfg->n_key_files ? cfg->n_key_files : 1, sizeof *s.verify_pems);
    SK_CHECK_ALLOC(s.verify_pems);
    for (; s.n_verify < cfg->n_key_files; s.n_verify++)
        if (!(s.verify_pems[s.n_verify] = read_file(cfg->key_files[s.n_verify], errmsg)))
            goto out;
    *out = s;
    memset(&s, 0, sizeof s);
    rc = 0;
out:
    sk_pki_sa_clear(&s);
    return rc;
}

void sk_pki_sa_clear(sk_pki_sa *s)
{
    if (s->signing_pem) {
        explicit_bzero(s->signing_pem, strlen(s->signing_pem));
        free(s->signing_pem);
    }
    for (size_t i = 0; i < s->n_verify; i++)
        free(s->verify_pems[i]);
    free(s->verify_pems);
    memset(s, 0, sizeof *s);
}

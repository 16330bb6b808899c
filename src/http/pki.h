/*
 * pki.h - the server's TLS material: the CA that signs serving and client
 * certificates, the serving certificate, and the admin client certificate
 * the generated kubeconfig carries.
 *
 * By default everything is generated: the CA once (DIR/ca.crt, ca.key,
 * kept across restarts so kubeconfigs stay valid), the serving certificate
 * at every start (DIR/apiserver.crt, apiserver.key: its SANs follow the
 * flags of this start, its expiry never catches a long-lived server's
 * restart), and a fresh admin certificate at every start (CN
 * kubernetes-admin, O system:masters). Any part can come from files
 * instead, so several servers (one PostgreSQL, several data dirs) share one
 * CA: --client-ca-file with --client-ca-key-file signs this server's own
 * serving and admin certificates with a shared CA.
 *
 * Private keys are written 0600 (created so, never widened), ECDSA P-256,
 * exported as PKCS#8. Why ECDSA: generation takes microseconds, so a start
 * is not slowed, and every client (Go, Python, OpenSSL, Node) accepts it.
 */
#ifndef SK_HTTP_PKI_H
#define SK_HTTP_PKI_H

#include <stddef.h>

typedef struct sk_pki_config {
    const char *dir;                /* where generated files go (the data dir) */
    const char *cert_file, *key_file; /* serving certificate and key; NULL: generated */
    const char *ca_file, *ca_key_file; /* the client CA (and its key); NULL: DIR/ca.* */
    const char *const *sans;        /* the serving certificate's names: IPs or DNS names */
    size_t n_sans;
} sk_pki_config;

typedef struct sk_pki {
    char *serving_cert_pem, *serving_key_pem; /* what the HTTPS server presents */
    char *ca_pem;                             /* trusted for client certificates */
    char *admin_cert_pem, *admin_key_pem;     /* NULL when there is no CA key to sign with */
} sk_pki;

/* Loads or generates everything cfg asks for into *out (new strings, free
 * with sk_pki_clear). -1 with *errmsg a new one-line message on failure. */
int sk_pki_load(const sk_pki_config *cfg, sk_pki *out, char **errmsg);
/* Frees what sk_pki_load made. */
void sk_pki_clear(sk_pki *p);

/*
 * The ServiceAccount token keys (kube/jwt.h takes them as PEM text). With
 * neither file given, DIR/sa.key: an RSA 2048 key generated on first start
 * (0600, as ca.key) and read at every later one, so tokens issued before a
 * restart still verify. RSA, not ECDSA as above: RS256 is what every
 * token consumer accepts. Several servers share keys by passing the same
 * files.
 */
typedef struct sk_pki_sa_config {
    const char *dir;
    const char *signing_key_file;   /* --service-account-signing-key-file; NULL: none */
    const char *const *key_files;   /* --service-account-key-file, n_key_files of them */
    size_t n_key_files;
} sk_pki_sa_config;

typedef struct sk_pki_sa {
    char *signing_pem;  /* NULL: only key files were given (tokens verify, none are issued) */
    char **verify_pems; /* one text per key file */
    size_t n_verify;
} sk_pki_sa;

/* Reads or generates what cfg asks for into *out (free with
 * sk_pki_sa_clear). -1 with *errmsg a new one-line message on failure. */
int sk_pki_sa_load(const sk_pki_sa_config *cfg, sk_pki_sa *out, char **errmsg);
void sk_pki_sa_clear(sk_pki_sa *s);

#endif

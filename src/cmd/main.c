/*
 * main.c - the sqlkube command line: serve, migrate, compact, import,
 * reencrypt.
 *
 * Every failure a user can cause (bad flag, an SQLite file that cannot be
 * opened, a malformed database URL, port in use) ends in ONE line on stderr
 * naming the problem, and exit status 1. A PostgreSQL that does not answer
 * is not such a failure: serve waits for it (wait_for_store).
 *
 * Signals are blocked in every thread and taken synchronously by the main
 * thread with sigwait, so no handler runs inside library code.
 *
 * Allocator. The server links jemalloc (the sanitizer builds keep their
 * own allocator). A create allocates and frees many small blocks
 * on a request thread (the parsed body, the typed copy, managedFields, the
 * reply) while other threads free what the writer and the cache hand over;
 * glibc's arenas spent a fifth of the request threads' CPU there, in
 * consolidation and heap trimming (bench/README.md, "The allocator").
 * Objects of 128 KiB and more are returned to the system as soon as they
 * are freed, under either allocator: jemalloc's oversize threshold puts
 * them in an arena that purges at once, glibc's mmap threshold gives them
 * their own mappings. Without that, a bulk load of 1 MiB objects left the
 * heap about 30% above what the cache held (bench/README.md, Watch).
 */
#include "cmd/import.h"
#include "cmd/reencrypt.h"
#include "cmd/server.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "ctl/compactor.h"
#include "http/pki.h"
#include "kube/jwt.h"
#include "kube/satoken.h"
#include "kube/options.h"
#include "kube/svcrange.h"
#include "kube/tokenfile.h"
#include "store/store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LISTEN "127.0.0.1:8080"
#define DEFAULT_DATA_DIR "./data"
#define DEFAULT_COMPACT_INTERVAL_S 300
#define DEFAULT_RETAIN_REVISIONS 10000
#define DEFAULT_WATCH_GRACE_S 5
#define DEFAULT_WATCH_STALL_S 15
#define DEFAULT_LEASE_DURATION_S 3600
#define DEFAULT_LEASE_RENEW_S 10
#define DEFAULT_EVENT_TTL_S 3600
#define DEFAULT_CONSISTENCY_CHECK_S 300
#define DEFAULT_MAX_OBJECT_BYTES (1536 * 1024) /* etcd's default request limit */
#define DEFAULT_MAX_CONNECTIONS_PER_IP 4096
#define DEFAULT_HEADER_TIMEOUT_S 10
#define IDLE_CONNECTION_TIMEOUT_S 90 /* kube-apiserver's IdleTimeout for keep-alive connections */
#define STORE_RETRY_FIRST_MS 100 /* wait_for_store's backoff: the first wait, */
#define STORE_RETRY_MAX_MS 5000  /* and its cap (README, PostgreSQL) */
#define FD_RESERVE 256 /* descriptors kept for the database, logs and the listener */
#define MAX_TLS_SANS 64
#define MAX_TOKEN_FILE_BYTES (16 * 1024 * 1024)
#define MAX_SA_KEY_FILES 16
#define MAX_API_AUDIENCES 16
#define MAX_RESOURCES 64

typedef struct options {
    const char *listen;
    const char *etcd_listen;
    int64_t etcd_progress_s;
    int64_t etcd_max_request_bytes;
    const char *etcd_cert_file, *etcd_key_file, *etcd_trusted_ca_file;
    int etcd_allow_unauthenticated; /* serve the etcd API off loopback without client certs */
    const char *data_dir;
    const char *db;
    const char *etcd_snapshot;
    const char *from_etcd; /* import: a live etcd's endpoints */
    const char *etcd_cacert, *etcd_cert, *etcd_key;
    int until_synced;
    int64_t compact_interval_s;
    int64_t retain;
    int64_t watch_grace_s;
    int64_t watch_stall_s;
    const char *identity_hostname;
    int64_t lease_duration_s, lease_renew_s, event_ttl_s;
    int64_t consistency_check_s;
    int64_t snapshot_bytes; /* as sk_cache_config.snapshot_bytes: 0 auto, < 0 none */
    int64_t window_events;  /* as sk_cache_config.window_events: 0 the default */
    int64_t max_object_bytes;
    int64_t max_connections; /* 0: as many as the open-file limit allows */
    int64_t max_connections_per_ip;
    int64_t header_timeout_s;
    const char *service_cidr, *node_ports;
    int always_allow; /* --authorization-mode=AlwaysAllow */
    int plain_http;
    const char *tls_cert_file, *tls_key_file, *client_ca_file, *client_ca_key_file;
    const char *advertise_address;
    const char *tls_sans[MAX_TLS_SANS];
    size_t n_tls_sans;
    const char *token_auth_file;
    const char *encryption_config;
    const char *resources[MAX_RESOURCES]; /* reencrypt --resource */
    size_t n_resources;
    int anonymous_auth;
    const char *sa_signing_key_file;
    const char *sa_key_files[MAX_SA_KEY_FILES];
    size_t n_sa_key_files;
    const char *sa_issuer;
    const char *api_audiences[MAX_API_AUDIENCES];
    size_t n_api_audiences;
    const char *audit_log_path;
    int64_t audit_log_maxsize, audit_log_maxbackup;
    int verbose;
} options;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: sqlkube <command> [flags]\n"
        "\n"
        "A Kubernetes-API-compatible object store on SQLite or PostgreSQL.\n"
        "\n"
        "commands:\n"
        "  serve     serve the Kubernetes API\n"
        "  migrate   apply database migrations and exit\n"
        "  compact   run one compaction pass and exit\n"
        "  import    import an etcd keyspace (--etcd-snapshot or --from-etcd) into an\n"
        "            empty store, with its revisions, and exit\n"
        "  reencrypt rewrite, in place, every object of the resources that\n"
        "            --encryption-provider-config encrypts which its first key did not\n"
        "            write (key rotation; safe beside running servers), and exit\n"
        "\n"
        "flags:\n"
        "  --listen HOST:PORT       address to serve on (default %s)\n"
        "  --etcd-listen HOST:PORT  serve: also serve the etcd v3 API (gRPC, cleartext\n"
        "                           HTTP/2) on this address, over the same store\n"
        "  --etcd-watch-progress-interval SECS  serve: how often an idle etcd watch that\n"
        "                           asked for progress_notify gets one (default 600, etcd's)\n"
        "  --etcd-cert-file FILE, --etcd-key-file FILE  serve: the etcd API over TLS with\n"
        "                           this PEM certificate (chain) and key (https:// endpoints)\n"
        "  --etcd-trusted-ca-file FILE  serve: require etcd clients' certificates, signed by\n"
        "                           this PEM CA (etcd's --client-cert-auth)\n"
        "  --etcd-max-request-bytes N  serve: the largest etcd write request taken (etcd's\n"
        "                           flag; default 1572864, 1.5 MiB)\n"
        "  --etcd-allow-unauthenticated  serve: let the etcd API listen off loopback without\n"
        "                           --etcd-trusted-ca-file (anyone who reaches it reads and\n"
        "                           writes every key); refused otherwise\n"
        "  --data-dir DIR           data directory: SQLite file, kubeconfig (default %s)\n"
        "  --etcd-snapshot FILE     import: the file `etcdctl snapshot save` wrote (or a\n"
        "                           member's db file) to import\n"
        "  --from-etcd ENDPOINTS    import: copy a live etcd (etcdctl's --endpoints list)\n"
        "                           at one revision, then follow its writes until SIGINT or\n"
        "                           SIGTERM (or --until-synced: until caught up)\n"
        "  --cacert FILE, --cert FILE, --key FILE  import --from-etcd: etcdctl's TLS flags\n"
        "                           (https endpoints; a client certificate)\n"
        "  --db URL                 sqlite:PATH (default sqlite:DIR/sqlkube.db) or a\n"
        "                           PostgreSQL URI/conninfo (postgres://user@host:port/db)\n"
        "  --compact-interval SECS  serve: seconds between compactions, 0 = never (default %d)\n"
        "  --retain N               revisions kept by compaction (default %d; 0 = compact up\n"
        "                           to the current revision)\n"
        "  --watch-grace SECS       serve: on SIGTERM, watches end spread over this many\n"
        "                           seconds, so clients do not reconnect at once (default %d)\n"
        "  --watch-stall-timeout SECS  serve: close a watch whose client reads nothing for\n"
        "                           this long while events wait (default %d)\n"
        "  --identity-hostname NAME serve: the host name in this server's identity Lease\n"
        "                           (kube-system/kube-apiserver-<hash>; default: hostname)\n"
        "  --identity-lease-duration SECS  its leaseDurationSeconds (default %d)\n"
        "  --identity-lease-renew-interval SECS  its heartbeat (default %d)\n"
        "  --event-ttl SECS         serve: Events expire this long after their last write\n"
        "                           (default %d)\n"
        "  --consistency-check-interval SECS  serve: compare the watch cache with the store\n"
        "                           this often, 0 = only on GET /debug/consistency (default %d)\n"
        "  --snapshot-memory SIZE   serve: memory the watch cache's past snapshots may take\n"
        "                           (bytes, or with K, M or G); lists at older revisions go\n"
        "                           to SQL. 0 = keep none; default auto: 2%% of the cached\n"
        "                           objects' bytes, at least 256K\n"
        "  --watch-cache-events N   serve: the watch cache's window of recent events; watches\n"
        "                           from older revisions are served from SQL history\n"
        "                           (default 100000)\n"
        "  --max-object-bytes SIZE  serve: largest object stored, after every patch and\n"
        "                           update (bytes, or with K or M; default 1536K)\n"
        "  --max-connections N      serve: open client connections at most (default: the\n"
        "                           open-file limit, raised to its hard limit, less %d)\n"
        "  --max-connections-per-ip N  serve: from one client address at most, 0 = no cap\n"
        "                           (default %d)\n"
        "  --request-header-timeout SECS  serve: close a new connection that has not sent a\n"
        "                           complete request header in this time (default %d)\n"
        "  --service-cluster-ip-range CIDR  serve: the IPv4 range Services' cluster IPs\n"
        "                           come from (default " SK_SERVICE_CIDR_DEFAULT ")\n"
        "  --service-node-port-range LO-HI  serve: the range node ports come from\n"
        "                           (default " SK_NODE_PORTS_DEFAULT ")\n"
        "  --authorization-mode MODE  serve: RBAC (default) or AlwaysAllow; applies to\n"
        "                           requests with an authenticated identity\n"
        "  --plain-http             serve: plain HTTP instead of HTTPS, on a loopback\n"
        "                           address only; requests without credentials are trusted\n"
        "                           (user system:unsecured, group system:masters)\n"
        "  --tls-cert-file FILE     serve: the serving certificate (PEM; default: one\n"
        "                           signed by the client CA at every start, DIR/apiserver.crt)\n"
        "  --tls-private-key-file FILE  its private key (PEM)\n"
        "  --client-ca-file FILE    serve: the CA client certificates are verified against\n"
        "                           (default DIR/ca.crt, generated on first start)\n"
        "  --client-ca-key-file FILE  its key: signs the serving certificate and the\n"
        "                           kubeconfig's admin certificate (default DIR/ca.key)\n"
        "  --tls-san NAME           serve: another IP or DNS name in the generated serving\n"
        "                           certificate (repeatable, or comma-separated)\n"
        "  --advertise-address IP   serve: this server's address for clients (a SAN too)\n"
        "  --token-auth-file FILE   serve: static bearer tokens, kube's CSV:\n"
        "                           token,user,uid,\"group1,group2\"\n"
        "  --encryption-provider-config FILE  serve, reencrypt: kube's\n"
        "                           EncryptionConfiguration: the resources it names are\n"
        "                           kept encrypted (identity, aescbc, aesgcm, secretbox)\n"
        "  --resource NAME          reencrypt: only this resource (secrets,\n"
        "                           deployments.apps; repeatable, or comma-separated;\n"
        "                           default: every one the file encrypts)\n"
        "  --anonymous-auth[=BOOL]  serve: requests without credentials are\n"
        "                           system:anonymous instead of 401 (default false)\n"
        "  --service-account-signing-key-file FILE  serve: the PEM RSA private key that\n"
        "                           signs ServiceAccount tokens (TokenRequest; default\n"
        "                           DIR/sa.key, generated on first start when no\n"
        "                           --service-account-key-file is given either)\n"
        "  --service-account-key-file FILE  serve: PEM public keys (or private keys,\n"
        "                           certificates) that verify ServiceAccount tokens\n"
        "                           (repeatable; default: the signing key's public part)\n"
        "  --service-account-issuer URL  serve: the tokens' iss claim (default\n"
        "                           " SK_SATOKEN_DEFAULT_ISSUER ")\n"
        "  --api-audiences AUD,...  serve: audiences a token must have one of (default:\n"
        "                           the issuer)\n"
        "  --audit-log-path PATH    serve: kube's audit log (audit.k8s.io/v1 Events at\n"
        "                           the Metadata level, one JSON line each; - is stdout)\n"
        "  --audit-log-maxsize MB   serve: rotate the audit log beyond this size (0: never)\n"
        "  --audit-log-maxbackup N  serve: rotated audit logs kept (0: all)\n"
        "  -v, --verbose            debug logging\n"
        "  --version                print the version\n"
        "  -h, --help               print this help\n",
        DEFAULT_LISTEN, DEFAULT_DATA_DIR, DEFAULT_COMPACT_INTERVAL_S, DEFAULT_RETAIN_REVISIONS,
        DEFAULT_WATCH_GRACE_S, DEFAULT_WATCH_STALL_S, DEFAULT_LEASE_DURATION_S,
        DEFAULT_LEASE_RENEW_S, DEFAULT_EVENT_TTL_S, DEFAULT_CONSISTENCY_CHECK_S, FD_RESERVE,
        DEFAULT_MAX_CONNECTIONS_PER_IP, DEFAULT_HEADER_TIMEOUT_S);
}

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "sqlkube: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

/* A byte count with an optional K, M or G (powers of 1024), at most 1T;
 * -1 if malformed. */
static int64_t parse_size(const char *s)
{
    char digits[32];
    size_t n = strlen(s);
    int shift = 0;
    if (n > 0 && strchr("KMG", s[n - 1])) {
        shift = s[n - 1] == 'K' ? 10 : s[n - 1] == 'M' ? 20 : 30;
        n--;
    }
    if (n == 0 || n >= sizeof digits)
        return -1;
    memcpy(digits, s, n);
    digits[n] = '\0';
    int64_t v = sk_parse_i64(digits);
    if (v < 0 || v > (INT64_C(1) << 40) >> shift)
        return -1;
    return v << shift;
}

/* "auto", or a size (parse_size), into sk_cache_config.snapshot_bytes
 * (0 auto, -1 none). -2 if malformed. */
static int64_t parse_snapshot_memory(const char *s)
{
    if (strcmp(s, "auto") == 0)
        return 0;
    int64_t v = parse_size(s);
    return v < 0 ? -2 : v == 0 ? -1 : v;
}

static int mkdir_p(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -1;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* The data directory holds Secrets and the continue-token key: only the
 * owner may read it, whatever the umask or an older version left. New
 * files are private through the umask set in main; this fixes what exists. */
static int restrict_data_dir(const char *dir)
{
    static const char *const files[] = {"sqlkube.db", "sqlkube.db-wal", "sqlkube.db-shm",
                                        "sqlkube.db-journal", "kubeconfig", "ca.key",
                                        "apiserver.key"};
    if (chmod(dir, 0700) < 0)
        return -1;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (chmod(path, 0600) < 0 && errno != ENOENT)
            return -1;
    }
    return 0;
}

/* Standard base64 of the NUL-terminated text, new. */
static char *base64(const char *text)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *in = (const unsigned char *)text;
    size_t n = strlen(text);
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    SK_CHECK_ALLOC(out);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? alphabet[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* Writes "  KEY: base64(pem)" (nothing for NULL). */
static void put_data(FILE *f, const char *indent, const char *key, const char *pem)
{
    if (!pem)
        return;
    char *b = base64(pem);
    fprintf(f, "%s%s: %s\n", indent, key, b);
    free(b);
}

/* The host clients reach a listen address at: a wildcard means this host. */
static void client_host(const char *listen, char *host, size_t n)
{
    const char *colon = strrchr(listen, ':');
    size_t len = colon ? (size_t)(colon - listen) : strlen(listen);
    snprintf(host, n, "%.*s", (int)len, listen);
    if (strcmp(host, "0.0.0.0") == 0)
        snprintf(host, n, "127.0.0.1");
}

/* Writes DIR/kubeconfig pointing at the server, atomically (rename): with
 * TLS (pki non-NULL) the CA to trust and the admin client certificate. */
static int write_kubeconfig(const char *dir, const char *listen, const sk_pki *pki)
{
    char path[4096], tmp[4200], host[256];
    snprintf(path, sizeof path, "%s/kubeconfig", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    client_host(listen, host, sizeof host);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f,
            "apiVersion: v1\n"
            "kind: Config\n"
            "clusters:\n"
            "- name: sqlkube\n"
            "  cluster:\n"
            "    server: %s://%s%s\n",
            pki ? "https" : "http", host, strrchr(listen, ':'));
    put_data(f, "    ", "certificate-authority-data", pki ? pki->ca_pem : NULL);
    fprintf(f, "contexts:\n"
               "- name: sqlkube\n"
               "  context:\n"
               "    cluster: sqlkube\n"
               "    user: sqlkube\n"
               "    namespace: default\n"
               "current-context: sqlkube\n"
               "users:\n"
               "- name: sqlkube\n");
    if (pki && pki->admin_cert_pem) {
        fprintf(f, "  user:\n");
        put_data(f, "    ", "client-certificate-data", pki->admin_cert_pem);
        put_data(f, "    ", "client-key-data", pki->admin_key_pem);
    } else {
        fprintf(f, "  user: {}\n");
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* The serving certificate's names: kube-apiserver's (localhost, the
 * kubernetes Service's names and IP), this host's, the loopbacks, the
 * listen and advertise addresses and every --tls-san. */
static size_t serving_sans(const options *o, const char **sans, size_t cap, char *hostname,
                           size_t hn, char *service_ip, char *listen_host, size_t ln)
{
    size_t n = 0;
    static const char *const fixed[] = {"localhost", "kubernetes", "kubernetes.default",
                                        "kubernetes.default.svc",
                                        "kubernetes.default.svc.cluster.local", "127.0.0.1",
                                        "::1"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        sans[n++] = fixed[i];
    if (gethostname(hostname, hn) == 0 && *hostname && strcmp(hostname, "localhost") != 0)
        sans[n++] = hostname;
    sk_svcrange range;
    SK_CHECK(sk_svcrange_parse_cidr(o->service_cidr ? o->service_cidr : SK_SERVICE_CIDR_DEFAULT,
                                    &range) == SK_OK);
    sk_svcrange_format(&range, range.base, service_ip);
    sans[n++] = service_ip;
    client_host(o->listen, listen_host, ln);
    if (strcmp(listen_host, "127.0.0.1") != 0)
        sans[n++] = listen_host;
    if (o->advertise_address)
        sans[n++] = o->advertise_address;
    for (size_t i = 0; i < o->n_tls_sans && n < cap; i++)
        sans[n++] = o->tls_sans[i];
    return n;
}

/* The ServiceAccount token keys (read or generated by http/pki.h) as a
 * key set; 1 on failure (reported). */
static int load_sa_keys(const options *o, sk_jwt_keys **out)
{
    sk_pki_sa_config c = {.dir = o->data_dir,
                          .signing_key_file = o->sa_signing_key_file,
                          .key_files = o->sa_key_files,
                          .n_key_files = o->n_sa_key_files};
    sk_pki_sa sa = {0};
    char *msg = NULL;
    int rc = 1;
    if (sk_pki_sa_load(&c, &sa, &msg) < 0) {
        fail("service account keys: %s", msg ? msg : "cannot be read");
        goto out;
    }
    if (sk_jwt_keys_new(sa.signing_pem, (const char *const *)sa.verify_pems, sa.n_verify, out,
                        &msg) != SK_OK) {
        fail("service account keys: %s", msg ? msg : "invalid");
        goto out;
    }
    rc = 0;
out:
    free(msg);
    sk_pki_sa_clear(&sa);
    return rc;
}

/* Reads and parses --token-auth-file. */
static int load_tokens(const char *path, sk_tokenfile **out)
{
    size_t n;
    char *text = sk_read_file(path, MAX_TOKEN_FILE_BYTES, &n);
    if (!text)
        return fail("cannot read --token-auth-file %s (missing, unreadable or over 16 MiB)",
                    path);
    char *msg = NULL;
    int rc = 0;
    if (sk_tokenfile_parse(text, n, out, &msg) != SK_OK) {
        fprintf(stderr, "sqlkube: invalid --token-auth-file %s: %s\n", path,
                msg ? msg : "not CSV");
        rc = 1;
    }
    explicit_bzero(text, n);
    free(text);
    free(msg);
    return rc;
}

/* Non-zero if the listen address is on the loopback network (127/8, [::1]). */
static int listen_is_loopback(const char *listen)
{
    const char *colon = strrchr(listen, ':');
    char host[64];
    struct in_addr a;
    if (!colon || (size_t)(colon - listen) >= sizeof host)
        return 0;
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    return strcmp(host, "[::1]") == 0 ||
           (inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127);
}

/* Every connection is a descriptor: raises the open-file limit to its hard
 * limit and returns the connections that leaves room for (or want, if less:
 * connections past the limit would stop the server accepting any). */
static int64_t connection_cap(int64_t want)
{
    struct rlimit nofile;
    int64_t fds = 1024;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        if (nofile.rlim_cur < nofile.rlim_max) {
            nofile.rlim_cur = nofile.rlim_max;
            setrlimit(RLIMIT_NOFILE, &nofile);
            getrlimit(RLIMIT_NOFILE, &nofile);
        }
        fds = nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur > 1000000
                  ? 1000000
                  : (int64_t)nofile.rlim_cur;
    }
    int64_t cap = fds > 2 * FD_RESERVE ? fds - FD_RESERVE : fds / 2;
    return want > 0 && want < cap ? want : cap;
}

#define LARGE_OBJECT_BYTES 131072
#ifdef SK_JEMALLOC
#define DIGITS_OF(n) #n
#define TEXT_OF(n) DIGITS_OF(n)
/* Read by jemalloc at its first allocation. */
const char *malloc_conf = "oversize_threshold:" TEXT_OF(LARGE_OBJECT_BYTES);
#endif

/*
 * Opens the store, trying again while it answers SK_ERR_UNAVAILABLE (a
 * PostgreSQL that is down, starting, or refusing us: sk_store_open), so a
 * server started before its database waits for it instead of leaning on a
 * restart policy; each failed attempt is logged with its reason, and
 * /readyz says it meanwhile. Attempts are STORE_RETRY_FIRST_MS apart,
 * doubling to STORE_RETRY_MAX_MS, where they stay: quick when the database
 * is a moment late, one connection every few seconds when it is down for
 * long. The wait between attempts is a wait for the shutdown signals, so
 * SIGTERM ends it at once (*sig_out: the signal, 0 when the store came up);
 * an attempt itself takes at most libpq's connect_timeout. Any other error
 * is final: 1, said on stderr.
 */
static int wait_for_store(sk_server *srv, const sigset_t *signals, int *sig_out)
{
    int64_t delay_ms = STORE_RETRY_FIRST_MS;
    int rc = 0;
    for (int attempt = 1;; attempt++) {
        char *msg = NULL;
        sk_err err = sk_server_open_store(srv, &msg);
        if (err == SK_OK) {
            if (attempt > 1)
                sk_log_info("the store is up (attempt %d)", attempt);
            *sig_out = 0;
            break;
        }
        if (err != SK_ERR_UNAVAILABLE) {
            rc = fail("%s", msg ? msg : "cannot open the store");
            free(msg);
            break;
        }
        sk_log_warn("the store is not up (attempt %d): %s; trying again in %.1f s", attempt,
                    msg ? msg : sk_err_name(err), (double)delay_ms / 1000);
        free(msg);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000};
        int sig = sigtimedwait(signals, NULL, &ts);
        if (sig > 0) {
            *sig_out = sig;
            break;
        }
        delay_ms = delay_ms * 2 < STORE_RETRY_MAX_MS ? delay_ms * 2 : STORE_RETRY_MAX_MS;
    }
    return rc;
}

static int cmd_serve(const options *o, const char *db)
{
#ifndef SK_JEMALLOC
    mallopt(M_MMAP_THRESHOLD, LARGE_OBJECT_BYTES);
#endif
    if (mkdir_p(o->data_dir) < 0 || restrict_data_dir(o->data_dir) < 0)
        return fail("cannot create a private data directory %s", o->data_dir);
    if (o->plain_http && !listen_is_loopback(o->listen))
        return fail("--plain-http serves without TLS or authentication: it is refused on %s, "
                    "which is not a loopback address",
                    o->listen);
    /* The etcd API has no RBAC: whoever connects reads every Secret. Off
     * loopback only clients with a certificate of the trusted CA may, as
     * kube-apiserver's --etcd-certfile is, unless the operator says otherwise. */
    if (o->etcd_listen && !listen_is_loopback(o->etcd_listen) && !o->etcd_trusted_ca_file &&
        !o->etcd_allow_unauthenticated)
        return fail("refusing to serve the etcd API on %s, which is not a loopback address, "
                    "without client certificate authentication: anyone who reaches it could "
                    "read and write every key, Secrets included. Give --etcd-cert-file, "
                    "--etcd-key-file and --etcd-trusted-ca-file (the CA that signed "
                    "kube-apiserver's --etcd-certfile), listen on 127.0.0.1, or pass "
                    "--etcd-allow-unauthenticated to serve it anyway",
                    o->etcd_listen);
    sk_tokenfile *tokens = NULL;
    if (o->token_auth_file && load_tokens(o->token_auth_file, &tokens) != 0)
        return 1;
    sk_jwt_keys *sa_keys = NULL;
    if (load_sa_keys(o, &sa_keys) != 0) {
        sk_tokenfile_free(tokens);
        return 1;
    }
    const char *issuer = o->sa_issuer ? o->sa_issuer : SK_SATOKEN_DEFAULT_ISSUER;
    const char *const *audiences = o->n_api_audiences ? o->api_audiences : &issuer;
    size_t n_audiences = o->n_api_audiences ? o->n_api_audiences : 1;
    sk_pki pki = {0};
    if (!o->plain_http) {
        const char *sans[MAX_TLS_SANS + 16];
        char hostname[256] = "", service_ip[64], listen_host[256];
        sk_pki_config pc = {
            .dir = o->data_dir,
            .cert_file = o->tls_cert_file,
            .key_file = o->tls_key_file,
            .ca_file = o->client_ca_file,
            .ca_key_file = o->client_ca_key_file,
            .sans = sans,
        };
        pc.n_sans = serving_sans(o, sans, sizeof sans / sizeof *sans, hostname, sizeof hostname,
                                 service_ip, listen_host, sizeof listen_host);
        char *perr = NULL;
        if (sk_pki_load(&pc, &pki, &perr) < 0) {
            fail("%s", perr ? perr : "cannot set up TLS");
            free(perr);
            sk_tokenfile_free(tokens);
            sk_jwt_keys_free(sa_keys);
            return 1;
        }
    }
    /* Test-only fault injection (sk_cache_config); never set in production. */
    const char *drop = getenv("SQLKUBE_TEST_DROP_REVISION");
    sk_server_config cfg = {
        .listen = o->listen,
        .etcd_listen = o->etcd_listen,
        .etcd_progress_s = o->etcd_progress_s,
        .etcd_max_request_bytes = o->etcd_max_request_bytes,
        .etcd_cert_file = o->etcd_cert_file,
        .etcd_key_file = o->etcd_key_file,
        .etcd_trusted_ca_file = o->etcd_trusted_ca_file,
        .data_dir = o->data_dir,
        .db = db,
        .compact_interval_s = o->compact_interval_s,
        .retain = o->retain,
        .watch_grace_s = o->watch_grace_s,
        .watch_stall_s = o->watch_stall_s,
        .identity_hostname = o->identity_hostname,
        .lease_duration_s = o->lease_duration_s,
        .lease_renew_s = o->lease_renew_s,
        .event_ttl_s = o->event_ttl_s,
        .consistency_check_s = o->consistency_check_s,
        .snapshot_bytes = o->snapshot_bytes,
        .window_events = o->window_events,
        .max_object_bytes = o->max_object_bytes,
        .max_connections = (unsigned)connection_cap(o->max_connections),
        .max_connections_per_ip = (unsigned)o->max_connections_per_ip,
        .header_timeout_s = (int)o->header_timeout_s,
        .service_cidr = o->service_cidr,
        .node_ports = o->node_ports,
        .authorization_always_allow = o->always_allow,
        .idle_timeout_s = IDLE_CONNECTION_TIMEOUT_S,
        .drop_rev_once = drop ? sk_parse_i64(drop) : 0,
        .corrupt_key_once = getenv("SQLKUBE_TEST_CORRUPT_OBJECT"),
        .tls_cert_pem = pki.serving_cert_pem,
        .tls_key_pem = pki.serving_key_pem,
        .tls_trust_pem = pki.ca_pem,
        .audit = {.path = o->audit_log_path,
                  .max_size_mb = o->audit_log_maxsize,
                  .max_backups = o->audit_log_maxbackup},
        .authn = {.tokens = tokens,
                  .anonymous = o->anonymous_auth,
                  .trust_unauthenticated = o->plain_http,
                  .sa_keys = sa_keys,
                  .sa_issuer = issuer,
                  .audiences = audiences,
                  .n_audiences = n_audiences},
        .encryption_config = o->encryption_config,
    };
    char *msg = NULL;
    int rc = 1, sig = 0;
    sk_server *srv = sk_server_start(&cfg, &msg);
    if (!srv) {
        fail("%s", msg ? msg : "cannot start");
        free(msg);
        goto out;
    }
    if (write_kubeconfig(o->data_dir, o->listen, o->plain_http ? NULL : &pki) < 0) {
        fail("cannot write %s/kubeconfig", o->data_dir);
        goto out;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (wait_for_store(srv, &set, &sig) != 0)
        goto out;
    if (sig == 0) {
        sk_log_info("sqlkube %s serving on %s://%s (%s store)", SK_VERSION,
                    o->plain_http ? "http" : "https", o->listen, sk_server_backend(srv));
        if (o->plain_http)
            sk_log_warn("plain HTTP (--plain-http): requests without credentials are trusted as "
                        "system:unsecured in system:masters; bearer tokens sent are still "
                        "checked");
        else if (!pki.admin_cert_pem)
            sk_log_warn("no client CA key (--client-ca-key-file): %s/kubeconfig has no client "
                        "certificate",
                        o->data_dir);
        if (o->etcd_listen)
            sk_log_info("serving the etcd v3 API on %s://%s%s",
                        o->etcd_cert_file ? "https" : "http", o->etcd_listen,
                        o->etcd_trusted_ca_file ? " (client certificates required)" : "");
        sigwait(&set, &sig);
    }
    sk_log_info("received %s, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = 0;
out:
    sk_server_stop(srv);
    sk_pki_clear(&pki);
    sk_tokenfile_free(tokens);
    sk_jwt_keys_free(sa_keys);
    return rc;
}

static int cmd_migrate(const char *db)
{
    char *msg = NULL;
    if (sk_store_migrate_only(db, &msg) != SK_OK) {
        fail("%s", msg ? msg : "migration failed");
        free(msg);
        return 1;
    }
    printf("migrations applied\n");
    return 0;
}

static int cmd_compact(const options *o, const char *db)
{
    sk_store *store = NULL;
    char *msg = NULL;
    if (sk_store_open(db, &store, &msg) != SK_OK) {
        fail("%s", msg ? msg : "cannot open the database");
        free(msg);
        return 1;
    }
    /* An operator's explicit request: it runs whatever the periodic
     * compactors did, and records its claim so that they skip this interval. */
    int won = 0;
    int64_t upto = 0, removed = 0;
    sk_err err = sk_store_compact_claim(store, 0, &won);
    if (err == SK_OK)
        err = sk_compactor_run_once(store, o->retain, &upto, &removed);
    sk_store_close(store);
    if (err != SK_OK)
        return fail("compaction failed: %s", sk_err_name(err));
    printf("compacted up to revision %lld: %lld rows removed\n", (long long)upto,
           (long long)removed);
    return 0;
}

int main(int argc, char **argv)
{
    options o = {
        .listen = DEFAULT_LISTEN,
        .data_dir = DEFAULT_DATA_DIR,
        .compact_interval_s = DEFAULT_COMPACT_INTERVAL_S,
        .retain = DEFAULT_RETAIN_REVISIONS,
        .watch_grace_s = DEFAULT_WATCH_GRACE_S,
        .watch_stall_s = DEFAULT_WATCH_STALL_S,
        .lease_duration_s = DEFAULT_LEASE_DURATION_S,
        .lease_renew_s = DEFAULT_LEASE_RENEW_S,
        .event_ttl_s = DEFAULT_EVENT_TTL_S,
        .consistency_check_s = DEFAULT_CONSISTENCY_CHECK_S,
        .max_object_bytes = DEFAULT_MAX_OBJECT_BYTES,
        .max_connections_per_ip = DEFAULT_MAX_CONNECTIONS_PER_IP,
        .header_timeout_s = DEFAULT_HEADER_TIMEOUT_S,
    };
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"etcd-listen", required_argument, NULL, 'e'},
        {"etcd-watch-progress-interval", required_argument, NULL, 'W'},
        {"etcd-cert-file", required_argument, NULL, 0x101},
        {"etcd-key-file", required_argument, NULL, 0x102},
        {"etcd-trusted-ca-file", required_argument, NULL, 0x103},
        {"etcd-max-request-bytes", required_argument, NULL, 0x104},
        {"etcd-allow-unauthenticated", no_argument, NULL, 0x105},
        {"data-dir", required_argument, NULL, 'd'},
        {"db", required_argument, NULL, 'b'},
        {"compact-interval", required_argument, NULL, 'c'},
        {"retain", required_argument, NULL, 'r'},
        {"watch-grace", required_argument, NULL, 'g'},
        {"watch-stall-timeout", required_argument, NULL, 's'},
        {"identity-hostname", required_argument, NULL, 'H'},
        {"identity-lease-duration", required_argument, NULL, 'D'},
        {"identity-lease-renew-interval", required_argument, NULL, 'R'},
        {"event-ttl", required_argument, NULL, 'E'},
        {"consistency-check-interval", required_argument, NULL, 'C'},
        {"snapshot-memory", required_argument, NULL, 'M'},
        {"max-object-bytes", required_argument, NULL, 'O'},
        {"max-connections", required_argument, NULL, 'X'},
        {"max-connections-per-ip", required_argument, NULL, 'P'},
        {"request-header-timeout", required_argument, NULL, 'T'},
        {"service-cluster-ip-range", required_argument, NULL, 'I'},
        {"service-node-port-range", required_argument, NULL, 'N'},
        {"authorization-mode", required_argument, NULL, 'Z'},
        {"plain-http", no_argument, NULL, 'p'},
        {"tls-cert-file", required_argument, NULL, 1001},
        {"tls-private-key-file", required_argument, NULL, 1002},
        {"client-ca-file", required_argument, NULL, 1003},
        {"client-ca-key-file", required_argument, NULL, 1004},
        {"tls-san", required_argument, NULL, 1005},
        {"advertise-address", required_argument, NULL, 1006},
        {"token-auth-file", required_argument, NULL, 1007},
        {"encryption-provider-config", required_argument, NULL, 1013},
        {"anonymous-auth", optional_argument, NULL, 1008},
        {"watch-cache-events", required_argument, NULL, 1009},
        {"service-account-signing-key-file", required_argument, NULL, 1100},
        {"service-account-key-file", required_argument, NULL, 1101},
        {"service-account-issuer", required_argument, NULL, 1102},
        {"api-audiences", required_argument, NULL, 1103},
        {"audit-log-path", required_argument, NULL, 1010},
        {"audit-log-maxsize", required_argument, NULL, 1011},
        {"audit-log-maxbackup", required_argument, NULL, 1012},
        {"etcd-snapshot", required_argument, NULL, 1020},
        {"from-etcd", required_argument, NULL, 1022},
        {"cacert", required_argument, NULL, 1023},
        {"cert", required_argument, NULL, 1024},
        {"key", required_argument, NULL, 1025},
        {"until-synced", no_argument, NULL, 1026},
        {"resource", required_argument, NULL, 1021},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    int ch;
    /* GNU getopt permutes, so flags may come before or after the command. */
    while ((ch = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'l':
            o.listen = optarg;
            break;
        case 'e':
            o.etcd_listen = optarg;
            break;
        case 0x101:
            o.etcd_cert_file = optarg;
            break;
        case 0x102:
            o.etcd_key_file = optarg;
            break;
        case 0x103:
            o.etcd_trusted_ca_file = optarg;
            break;
        case 0x105:
            o.etcd_allow_unauthenticated = 1;
            break;
        case 0x104:
            o.etcd_max_request_bytes = sk_parse_i64(optarg);
            if (o.etcd_max_request_bytes < 1024 || o.etcd_max_request_bytes > 64 * 1024 * 1024)
                return fail("invalid --etcd-max-request-bytes %s: want 1024 to 67108864", optarg);
            break;
        case 'W':
            if ((o.etcd_progress_s = sk_parse_i64(optarg)) <= 0 || o.etcd_progress_s > 86400)
                return fail("invalid --etcd-watch-progress-interval %s: want 1 to 86400 seconds",
                            optarg);
            break;
        case 'd':
            o.data_dir = optarg;
            break;
        case 'b':
            o.db = optarg;
            break;
        case 'c':
            if ((o.compact_interval_s = sk_parse_i64(optarg)) < 0 ||
                o.compact_interval_s > 366 * 24 * 3600)
                return fail("invalid --compact-interval %s: want 0 to 31622400 seconds", optarg);
            break;
        case 'r':
            if ((o.retain = sk_parse_i64(optarg)) < 0)
                return fail("invalid --retain %s: want a whole number", optarg);
            break;
        case 'g':
            if ((o.watch_grace_s = sk_parse_i64(optarg)) < 0)
                return fail("invalid --watch-grace %s: want whole seconds", optarg);
            break;
        case 's':
            if ((o.watch_stall_s = sk_parse_i64(optarg)) <= 0 || o.watch_stall_s > 3600)
                return fail("invalid --watch-stall-timeout %s: want 1 to 3600 seconds", optarg);
            break;
        case 'H':
            if (!*optarg || strlen(optarg) > 253)
                return fail("invalid --identity-hostname %s: want 1 to 253 characters", optarg);
            o.identity_hostname = optarg;
            break;
        case 'D':
            if ((o.lease_duration_s = sk_parse_i64(optarg)) <= 0 || o.lease_duration_s > INT32_MAX)
                return fail("invalid --identity-lease-duration %s: want whole seconds > 0", optarg);
            break;
        case 'R':
            if ((o.lease_renew_s = sk_parse_i64(optarg)) <= 0 || o.lease_renew_s > 86400)
                return fail("invalid --identity-lease-renew-interval %s: want 1 to 86400 seconds",
                            optarg);
            break;
        case 'E':
            if ((o.event_ttl_s = sk_parse_i64(optarg)) <= 0 || o.event_ttl_s > 366 * 24 * 3600)
                return fail("invalid --event-ttl %s: want 1 to 31622400 seconds", optarg);
            break;
        case 'C':
            if ((o.consistency_check_s = sk_parse_i64(optarg)) < 0 ||
                o.consistency_check_s > 366 * 24 * 3600)
                return fail("invalid --consistency-check-interval %s: want 0 to 31622400 seconds",
                            optarg);
            break;
        case 'M':
            if ((o.snapshot_bytes = parse_snapshot_memory(optarg)) < -1)
                return fail("invalid --snapshot-memory %s: want auto, or bytes with an optional K, "
                            "M or G, up to 1T",
                            optarg);
            break;
        case 'O':
            if ((o.max_object_bytes = parse_size(optarg)) < 1024 ||
                o.max_object_bytes > 64 * 1024 * 1024)
                return fail("invalid --max-object-bytes %s: want 1K to 64M", optarg);
            break;
        case 'X':
            if ((o.max_connections = sk_parse_i64(optarg)) < 16 || o.max_connections > 1000000)
                return fail("invalid --max-connections %s: want 16 to 1000000", optarg);
            break;
        case 'P':
            if ((o.max_connections_per_ip = sk_parse_i64(optarg)) < 0 ||
                o.max_connections_per_ip > 1000000)
                return fail("invalid --max-connections-per-ip %s: want 0 to 1000000", optarg);
            break;
        case 'T':
            if ((o.header_timeout_s = sk_parse_i64(optarg)) <= 0 || o.header_timeout_s > 3600)
                return fail("invalid --request-header-timeout %s: want 1 to 3600 seconds", optarg);
            break;
        case 'I': {
            sk_svcrange r;
            if (sk_svcrange_parse_cidr(optarg, &r) != SK_OK)
                return fail("invalid --service-cluster-ip-range %s: want an IPv4 CIDR with a "
                            "prefix of 12 to 30 bits",
                            optarg);
            o.service_cidr = optarg;
            break;
        }
        case 'N': {
            sk_svcrange r;
            if (sk_svcrange_parse_ports(optarg, &r) != SK_OK)
                return fail("invalid --service-node-port-range %s: want LO-HI within 1-65535",
                            optarg);
            o.node_ports = optarg;
            break;
        }
        case 'Z':
            if (strcmp(optarg, "RBAC") == 0)
                o.always_allow = 0;
            else if (strcmp(optarg, "AlwaysAllow") == 0)
                o.always_allow = 1;
            else
                return fail("invalid --authorization-mode %s: want RBAC or AlwaysAllow", optarg);
            break;
        case 'p':
            o.plain_http = 1;
            break;
        case 1001:
            o.tls_cert_file = optarg;
            break;
        case 1002:
            o.tls_key_file = optarg;
            break;
        case 1003:
            o.client_ca_file = optarg;
            break;
        case 1004:
            o.client_ca_key_file = optarg;
            break;
        case 1100:
            o.sa_signing_key_file = optarg;
            break;
        case 1101:
            if (o.n_sa_key_files == MAX_SA_KEY_FILES)
                return fail("%s", "too many --service-account-key-file flags: at most 16");
            o.sa_key_files[o.n_sa_key_files++] = optarg;
            break;
        case 1102:
            if (!*optarg)
                return fail("%s", "--service-account-issuer must not be empty");
            o.sa_issuer = optarg;
            break;
        case 1103:
            for (char *aud = strtok(optarg, ","); aud; aud = strtok(NULL, ",")) {
                if (o.n_api_audiences == MAX_API_AUDIENCES)
                    return fail("%s", "too many --api-audiences: at most 16");
                o.api_audiences[o.n_api_audiences++] = aud;
            }
            break;
        case 1005:
            for (char *name = strtok(optarg, ","); name; name = strtok(NULL, ",")) {
                if (o.n_tls_sans == MAX_TLS_SANS)
                    return fail("%s", "too many --tls-san names: at most 64");
                o.tls_sans[o.n_tls_sans++] = name;
            }
            break;
        case 1006: {
            unsigned char ip[16];
            if (inet_pton(AF_INET, optarg, ip) != 1 && inet_pton(AF_INET6, optarg, ip) != 1)
                return fail("invalid --advertise-address %s: want an IP address", optarg);
            o.advertise_address = optarg;
            break;
        }
        case 1007:
            o.token_auth_file = optarg;
            break;
        case 1013:
            o.encryption_config = optarg;
            break;
        case 1021:
            for (char *r = strtok(optarg, ","); r; r = strtok(NULL, ",")) {
                if (o.n_resources == MAX_RESOURCES)
                    return fail("%s", "too many --resource names: at most 64");
                o.resources[o.n_resources++] = r;
            }
            break;
        case 1008:
            if ((o.anonymous_auth = optarg ? sk_parse_bool(optarg) : 1) < 0)
                return fail("invalid --anonymous-auth %s: want true or false", optarg);
            break;
        case 1009:
            if ((o.window_events = sk_parse_i64(optarg)) < 1 || o.window_events > 100000000)
                return fail("invalid --watch-cache-events %s: want 1 to 100000000", optarg);
            break;
        case 1010:
            if (!*optarg)
                return fail("%s", "invalid --audit-log-path: empty");
            o.audit_log_path = optarg;
            break;
        case 1011:
            if ((o.audit_log_maxsize = sk_parse_i64(optarg)) < 0 || o.audit_log_maxsize > 1 << 20)
                return fail("invalid --audit-log-maxsize %s: want 0 to 1048576 MB", optarg);
            break;
        case 1012:
            if ((o.audit_log_maxbackup = sk_parse_i64(optarg)) < 0 || o.audit_log_maxbackup > 4096)
                return fail("invalid --audit-log-maxbackup %s: want 0 to 4096", optarg);
            break;
        case 1020:
            if (!*optarg)
                return fail("%s", "invalid --etcd-snapshot: empty");
            o.etcd_snapshot = optarg;
            break;
        case 1022:
            if (!*optarg)
                return fail("%s", "invalid --from-etcd: empty");
            o.from_etcd = optarg;
            break;
        case 1023:
            o.etcd_cacert = optarg;
            break;
        case 1024:
            o.etcd_cert = optarg;
            break;
        case 1025:
            o.etcd_key = optarg;
            break;
        case 1026:
            o.until_synced = 1;
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'V':
            printf("sqlkube %s\n", SK_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            return fail("flag %s needs a value (see --help)", argv[optind - 1]);
        default:
            return fail("unknown flag %s (see --help)", argv[optind - 1]);
        }
    }
    const char *cmd = optind < argc ? argv[optind++] : NULL;
    if (optind < argc)
        return fail("unexpected argument %s (see --help)", argv[optind]);
    if (!cmd) {
        usage(stderr);
        return 1;
    }
    if (o.verbose)
        sk_log_set_level(SK_LOG_DEBUG);
    if (!o.tls_cert_file != !o.tls_key_file)
        return fail("%s", "--tls-cert-file and --tls-private-key-file go together");
    if (o.client_ca_key_file && !o.client_ca_file)
        return fail("%s", "--client-ca-key-file needs --client-ca-file");
    if (o.plain_http && (o.tls_cert_file || o.client_ca_file || o.n_tls_sans))
        return fail("%s", "--plain-http serves no TLS: drop the TLS flags");
    if (!o.etcd_cert_file != !o.etcd_key_file)
        return fail("%s", "--etcd-cert-file and --etcd-key-file go together");
    if (o.etcd_trusted_ca_file && !o.etcd_cert_file)
        return fail("%s", "--etcd-trusted-ca-file needs --etcd-cert-file and --etcd-key-file");
    if ((o.etcd_snapshot || o.from_etcd) && strcmp(cmd, "import") != 0)
        return fail("%s", "--etcd-snapshot and --from-etcd are flags of import");
    if (o.etcd_snapshot && o.from_etcd)
        return fail("%s", "import takes --etcd-snapshot or --from-etcd, not both");
    if ((o.etcd_cacert || o.etcd_cert || o.etcd_key || o.until_synced) && !o.from_etcd)
        return fail("%s", "--cacert, --cert, --key and --until-synced are flags of import "
                          "--from-etcd");
    if (!o.etcd_cert != !o.etcd_key)
        return fail("%s", "--cert and --key go together");
    if (o.n_resources && strcmp(cmd, "reencrypt") != 0)
        return fail("%s", "--resource is a flag of reencrypt");
    if ((o.etcd_cert_file || o.etcd_trusted_ca_file || o.etcd_max_request_bytes ||
         o.etcd_allow_unauthenticated) &&
        !o.etcd_listen)
        return fail("%s", "the --etcd-* flags need --etcd-listen");

    char dbbuf[4200];
    const char *db = o.db;
    if (!db) {
        snprintf(dbbuf, sizeof dbbuf, "sqlite:%s/sqlkube.db", o.data_dir);
        db = dbbuf;
    }

    /* Whatever sqlkube creates (the database and its WAL, the kubeconfig,
     * the data directory) is its owner's alone. */
    umask(077);

    /* Block the shutdown signals before any thread starts; serve sigwaits. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (strcmp(cmd, "serve") == 0)
        return cmd_serve(&o, db);
    if (strcmp(cmd, "migrate") == 0)
        return cmd_migrate(db);
    if (strcmp(cmd, "compact") == 0)
        return cmd_compact(&o, db);
    if (strcmp(cmd, "import") == 0)
        return o.etcd_snapshot ? sk_cmd_import_snapshot(db, o.etcd_snapshot)
               : o.from_etcd
                   ? sk_cmd_import_from_etcd(
                         db, o.from_etcd,
                         &(sk_etcd_client_tls){o.etcd_cacert, o.etcd_cert, o.etcd_key},
                         o.until_synced)
                   : fail("%s", "import needs --etcd-snapshot FILE or --from-etcd ENDPOINTS");
    if (strcmp(cmd, "reencrypt") == 0)
        return o.encryption_config
                   ? sk_cmd_reencrypt(db, o.encryption_config, o.resources, o.n_resources)
                   : fail("%s", "reencrypt needs --encryption-provider-config FILE");
    return fail("unknown command %s (see --help)", cmd);
}

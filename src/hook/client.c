/*
 * client.c - see client.h.
 *
 * libcurl's GnuTLS flavour (Debian's libcurl3-gnutls; the server already
 * speaks TLS through GnuTLS) takes its roots from a file only: 7.88 has no
 * CURLOPT_CAINFO_BLOB for GnuTLS. So each caBundle is written once to a
 * private directory (mode 0700, made when the first caBundle needs it, so
 * a server without webhooks leaves nothing behind even when killed;
 * removed at the end), named
 * by the SHA-256 of its bytes: the same bundle is the same file, and a
 * file is never rewritten once named, so threads need no lock to share
 * them (a new one is written aside and renamed into place). The file is
 * found when the webhook configurations are compiled (hook/admission.h),
 * not at each call.
 *
 * Connections are reused through a pool of easy handles: each keeps its
 * own kept-alive connections (libcurl does not support one connection
 * cache used by concurrent threads), a call takes an idle handle (or makes
 * one) and gives it back, at most POOL_MAX kept. TLS sessions and DNS
 * answers are shared between all handles through a share handle, whose
 * locks are one mutex per curl_lock_data, as libcurl asks of a share used
 * from several threads.
 */
#include "hook/client.h"
#include "core/check.h"
#include "core/log.h"

#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POOL_MAX 32

struct sk_hook_client {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_mu;
    CURL *idle[POOL_MAX]; /* under pool_mu */
    int n_idle;
    char dir[256]; /* the caBundle files; made under pool_mu when dir_made is 0 */
    int dir_made;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
    SK_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *arg)
{
    (void)h;
    (void)access;
    sk_hook_client *c = arg;
    pthread_mutex_lock(&c->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
    (void)h;
    sk_hook_client *c = arg;
    pthread_mutex_unlock(&c->locks[data]);
}

sk_hook_client *sk_hook_client_new(void)
{
    pthread_once(&global_once, global_init);
    sk_hook_client *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->locks[i], NULL);
    c->share = curl_share_init();
    SK_CHECK(c->share != NULL);
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    pthread_mutex_init(&c->pool_mu, NULL);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return c;
}

void sk_hook_client_free(sk_hook_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_idle; i++)
        curl_easy_cleanup(c->idle[i]);
    pthread_mutex_destroy(&c->pool_mu);
    curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->locks[i]);
    DIR *d = c->dir_made > 0 ? opendir(c->dir) : NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", c->dir, e->d_name);
            unlink(path);
        }
        closedir(d);
        rmdir(c->dir);
    }
    free(c);
}

/* The file holding ca (path written to path), made if missing. -1 if it
 * cannot be written. */
static int ca_file_at(sk_hook_client *c, const unsigned char *ca, size_t len, char *path, size_t n)
{
    pthread_mutex_lock(&c->pool_mu);
    if (!c->dir_made) {
        const char *tmp = getenv("TMPDIR");
        snprintf(c->dir, sizeof c->dir, "%s/sqlkube-webhook-ca.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        c->dir_made = mkdtemp(c->dir) ? 1 : -1;
        if (c->dir_made < 0)
            sk_log_warn("webhooks: cannot make a directory for caBundles (%s): webhooks with "
                        "a caBundle will fail",
                        c->dir);
    }
    int made = c->dir_made > 0;
    pthread_mutex_unlock(&c->pool_mu);
    unsigned char digest[32];
    if (!made || gnutls_hash_fast(GNUTLS_DIG_SHA256, ca, len, digest) < 0)
        return -1;
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    snprintf(path, n, "%s/%s.pem", c->dir, hex);
    if (access(path, R_OK) == 0)
        return 0;
    char aside[600];
    snprintf(aside, sizeof aside, "%s.%lu.tmp", path, (unsigned long)pthread_self());
    int fd = open(aside, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    int ok = write(fd, ca, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(aside, path) != 0) {
        unlink(aside);
        return -1;
    }
    return 0;
}

char *sk_hook_client_ca_file(sk_hook_client *c, const unsigned char *ca, size_t len)
{
    char path[512];
    return ca_file_at(c, ca, len, path, sizeof path) < 0 ? NULL : strdup(path);
}

/* An idle handle with its connections, or a new one; reset either way. */
static CURL *take_handle(sk_hook_client *c)
{
    CURL *h = NULL;
    pthread_mutex_lock(&c->pool_mu);
    if (c->n_idle > 0)
        h = c->idle[--c->n_idle];
    pthread_mutex_unlock(&c->pool_mu);
    if (!h) {
        h = curl_easy_init();
        SK_CHECK(h != NULL);
    }
    return h;
}

static void give_back(sk_hook_client *c, CURL *h)
{
    curl_easy_reset(h); /* options only (none pointing at the call's memory): connections stay */
    pthread_mutex_lock(&c->pool_mu);
    if (c->n_idle < POOL_MAX) {
        c->idle[c->n_idle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->pool_mu);
    if (h)
        curl_easy_cleanup(h);
}

/* The most of a webhook's answer read: an AdmissionReview is an object's
 * patch at most, and a webhook that streams without end must not take the
 * server's memory with it. */
#define MAX_ANSWER (16u * 1024 * 1024)

typedef struct answer {
    sk_buf *out;
    size_t got;
} answer;

static size_t collect(char *data, size_t size, size_t nmemb, void *arg)
{
    answer *a = arg;
    size_t n = size * nmemb;
    if (n > MAX_ANSWER - a->got)
        return 0; /* curl ends the transfer: CURLE_WRITE_ERROR */
    a->got += n;
    sk_buf_append(a->out, data, n);
    return n;
}

sk_err sk_hook_client_post(sk_hook_client *c, const sk_hook_post *p, long *status, sk_buf *out,
                           char **why)
{
    sk_err e = SK_ERR_UNAVAILABLE;
    char errbuf[CURL_ERROR_SIZE] = "";
    sk_buf msg = SK_BUF_INIT;
    struct curl_slist *headers = NULL;
    CURL *h = take_handle(c);
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json, */*");
    curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    curl_easy_setopt(h, CURLOPT_URL, p->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)p->timeout_s * 1000L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (p->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, p->ca_file);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    struct curl_slist *connect_to = NULL;
    if (p->connect_to) {
        connect_to = curl_slist_append(NULL, p->connect_to);
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to);
    }
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, p->body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->body_len);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    answer got = {out, 0};
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "sqlkube");
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(connect_to);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        e = SK_OK;
    } else if (rc == CURLE_WRITE_ERROR) {
        sk_buf_printf(&msg, "the webhook's answer is larger than %u bytes", MAX_ANSWER);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        /* Go's words for the same thing, which clients match on */
        sk_buf_puts(&msg, "context deadline exceeded");
        e = SK_ERR_TIMEOUT;
    } else {
        sk_buf_puts(&msg, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }
    curl_slist_free_all(headers);
    give_back(c, h);
    if (e != SK_OK)
        *why = sk_buf_steal(&msg, NULL);
    sk_buf_free(&msg);
    return e;
}

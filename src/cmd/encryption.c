/*
 * encryption.c - the store's value codec over enc/enc.h (see
 * encryption.h): maps a row's resource column to kube's group and resource
 * and its key to kube's etcd key, the additional data aesgcm binds.
 */
#include "cmd/encryption.h"

#include "core/buf.h"
#include "core/check.h"
#include "core/util.h"
#include "enc/enc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Far above any real configuration, which holds a few keys. */
#define MAX_CONFIG_BYTES (1024 * 1024)
/* A resource column ("<plural>.<group>") fits: kube caps both names. */
#define MAX_RESOURCE 512

struct sk_encryption {
    sk_enc_config *config;
    sk_store_codec codec;
};

/* The chain for a resource column, or NULL when its values stay plain. */
static const sk_enc_chain *chain_for(const sk_enc_config *c, const char *column)
{
    char resource[MAX_RESOURCE];
    const char *dot = strchr(column, '.');
    size_t n = dot ? (size_t)(dot - column) : strlen(column);
    SK_CHECK(n < sizeof resource);
    memcpy(resource, column, n);
    resource[n] = '\0';
    return sk_enc_lookup(c, dot ? dot + 1 : "", resource);
}

/* kube's etcd key of an object: /registry/<resource>/[<namespace>/]<name>. */
static char *etcd_key(const char *column, const char *ns, const char *name, size_t *len)
{
    sk_buf b = SK_BUF_INIT;
    const char *dot = strchr(column, '.');
    sk_buf_puts(&b, "/registry/");
    sk_buf_append(&b, column, dot ? (size_t)(dot - column) : strlen(column));
    sk_buf_putc(&b, '/');
    if (*ns)
        sk_buf_printf(&b, "%s/", ns);
    sk_buf_puts(&b, name);
    return sk_buf_steal(&b, len);
}

static char *codec_seal(void *ctx, const char *resource, const char *ns, const char *name,
                        const char *text, size_t len, size_t *out_len)
{
    const sk_encryption *e = ctx;
    const sk_enc_chain *ch = chain_for(e->config, resource);
    char *out = NULL;
    if (!ch)
        return NULL;
    size_t klen;
    char *key = etcd_key(resource, ns, name, &klen);
    SK_CHECK(sk_enc_seal(ch, text, len, key, klen, &out, out_len) == SK_OK);
    free(key);
    return out;
}

static sk_err codec_open(void *ctx, const char *resource, const char *ns, const char *name,
                         const char *stored, size_t len, char **out, size_t *out_len, int *stale,
                         char **errmsg)
{
    const sk_encryption *e = ctx;
    const sk_enc_chain *ch = chain_for(e->config, resource);
    if (!ch) {
        *out = NULL;
        return SK_OK;
    }
    size_t klen;
    char *key = etcd_key(resource, ns, name, &klen);
    bool was_stale = false;
    sk_err err = sk_enc_open(ch, stored, len, key, klen, out, out_len, &was_stale, errmsg);
    if (err == SK_OK)
        *stale = was_stale;
    free(key);
    return err;
}

sk_encryption *sk_encryption_load(const char *path, char **errmsg)
{
    size_t n = 0;
    char *text = sk_read_file(path, MAX_CONFIG_BYTES, &n);
    sk_encryption *e = NULL;
    char *why = NULL;
    if (!text) {
        if (asprintf(errmsg,
                     "cannot read --encryption-provider-config %s (missing, unreadable "
                     "or over 1 MiB)",
                     path) < 0)
            *errmsg = NULL;
        goto out;
    }
    sk_enc_config *config = NULL;
    if (sk_enc_config_parse(text, n, &config, &why) != SK_OK) {
        if (asprintf(errmsg, "invalid --encryption-provider-config %s: %s", path, why) < 0)
            *errmsg = NULL;
        goto out;
    }
    e = calloc(1, sizeof *e);
    SK_CHECK_ALLOC(e);
    e->config = config;
    e->codec = (sk_store_codec){e, codec_seal, codec_open};
out:
    if (text) {
        explicit_bzero(text, n); /* it holds the keys */
        free(text);
    }
    free(why);
    return e;
}

const sk_store_codec *sk_encryption_codec(const sk_encryption *e)
{
    return &e->codec;
}

int sk_encryption_covers(const sk_encryption *e, const char *resource)
{
    /* A name past kube's caps is no resource a file can name. */
    return strlen(resource) < MAX_RESOURCE && chain_for(e->config, resource) != NULL;
}

void sk_encryption_free(sk_encryption *e)
{
    if (!e)
        return;
    sk_enc_config_free(e->config);
    free(e);
}

/*
 * enc.c - kube's EncryptionConfiguration: reading and validating it as
 * kube-apiserver 1.32 does (k8s.io/apiserver's validation of
 * apiserver.config.k8s.io, then its transformer table), and the providers'
 * value transformations (see enc.h for the stored layout and why it is
 * base64).
 *
 * Ciphers are GnuTLS's (AES-CBC, AES-GCM) and libsodium's (secretbox): no
 * cipher is written here, only kube's framing around them (IV or nonce
 * first, PKCS#7 padding checked as kube checks it).
 *
 * Invariants: a parsed config holds only keys of a length its provider
 * accepts (validation refuses others before any key is kept), so the
 * ciphers are never handed a wrong-sized key (SK_CHECK guards it anyway:
 * a wrong key size would write values nobody can read). Keys are zeroed
 * before their memory is freed.
 */
#include "enc/enc.h"
#include "kube/validate.h"

#include "core/buf.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/yaml.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define ENC_PREFIX "k8s:enc:"
#define AES_BLOCK 16
#define GCM_NONCE 12
#define GCM_TAG 16
#define MAX_KEY 32
/* YAML nesting kube's decoder would accept and a config never needs. */
#define CONFIG_MAX_DEPTH 32

typedef enum { P_IDENTITY, P_AESCBC, P_AESGCM, P_SECRETBOX } provider_kind;

static const char *const kind_names[] = {"identity", "aescbc", "aesgcm", "secretbox"};

typedef struct enc_key {
    char *prefix; /* "k8s:enc:<provider>:v1:<name>:" */
    size_t prefix_len;
    char *name;
    unsigned char secret[MAX_KEY];
    size_t secret_len;
} enc_key;

typedef struct provider {
    provider_kind kind;
    size_t n_keys;
    enc_key *keys;
} provider;

struct sk_enc_chain {
    char *group;
    char *resource;
    size_t n;
    const provider **v; /* borrowed from the config's providers */
};

struct sk_enc_config {
    size_t n_providers;
    provider *providers;
    size_t n_chains;
    sk_enc_chain *chains;
};

/* ---- errors: kube's field.ErrorList, aggregated as ToAggregate does ---- */

/* Appends "<path>: <body>" unless the same message is already there
 * (ToAggregate drops repeated messages). */
static void add_error(json_t *errs, const char *path, const sk_buf *body)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "%s: %s", path, body->data);
    size_t i;
    json_t *e;
    bool seen = false;
    json_array_foreach(errs, i, e)
    {
        seen = seen || strcmp(json_string_value(e), b.data) == 0;
    }
    if (!seen)
        SK_CHECK(json_array_append_new(errs, json_string(b.data)) == 0);
    sk_buf_free(&b);
}

/* A field error without a value: "<type>: <detail>". */
static void err_plain(json_t *errs, const char *path, const char *type, const char *detail)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "%s: %s", type, detail);
    add_error(errs, path, &b);
    sk_buf_free(&b);
}

static void err_required(json_t *errs, const char *path, const char *detail)
{
    err_plain(errs, path, "Required value", detail);
}

static void err_forbidden(json_t *errs, const char *path, const char *detail)
{
    err_plain(errs, path, "Forbidden", detail);
}

/* field.Invalid with a string value, which Go prints %q-quoted. */
static void err_invalid(json_t *errs, const char *path, const char *value, const char *detail)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, "Invalid value: ");
    sk_buf_go_quoted(&b, value);
    sk_buf_printf(&b, ": %s", detail);
    add_error(errs, path, &b);
    sk_buf_free(&b);
}

/* field.Invalid with a []string value: Go prints it as %#v does,
 * []string{"a", "b"}. */
static void err_invalid_list(json_t *errs, const char *path, json_t *list, const char *detail)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, "Invalid value: ");
    sk_go_string_slice(&b, list);
    sk_buf_printf(&b, ": %s", detail);
    add_error(errs, path, &b);
    sk_buf_free(&b);
}

/* A field of the wrong JSON type: kube's decoder refuses the file before
 * validating it; the path is named the way the field errors name it. */
static void err_type(json_t *errs, const char *path, const char *want)
{
    err_plain(errs, path, "Invalid value", want);
}

/* "<lead>: " then one message, or several as "[a, b]" (Go's aggregate). */
static char *aggregate(const char *lead, json_t *errs)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, "%s: ", lead);
    size_t n = json_array_size(errs);
    if (n > 1)
        sk_buf_putc(&b, '[');
    size_t i;
    json_t *e;
    json_array_foreach(errs, i, e)
    {
        if (i)
            sk_buf_puts(&b, ", ");
        sk_buf_puts(&b, json_string_value(e));
    }
    if (n > 1)
        sk_buf_putc(&b, ']');
    return sk_buf_steal(&b, NULL);
}

/* ---- group/resource as schema.ParseGroupResource reads "res.group" ---- */

typedef struct group_resource {
    char *group;
    char *resource;
} group_resource;

static group_resource parse_gr(const char *s)
{
    group_resource gr;
    const char *dot = strchr(s, '.');
    gr.resource = dot ? strndup(s, (size_t)(dot - s)) : strdup(s);
    gr.group = strdup(dot ? dot + 1 : "");
    SK_CHECK_ALLOC(gr.resource);
    SK_CHECK_ALLOC(gr.group);
    return gr;
}

static void gr_free(group_resource *gr)
{
    free(gr->group);
    free(gr->resource);
}

/* kube's grYAMLString: "*." for the core group's wildcard, else
 * "resource" or "resource.group". */
static void gr_yaml(sk_buf *b, const char *group, const char *resource)
{
    if (!*group && strcmp(resource, "*") == 0)
        sk_buf_puts(b, "*.");
    else if (!*group)
        sk_buf_puts(b, resource);
    else
        sk_buf_printf(b, "%s.%s", resource, group);
}

/* ---- validation (kube's ValidateEncryptionConfiguration) ---- */

static bool has_capital(const char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            return true;
    return false;
}

/* Duplicates and wildcard overlaps within one resources list. */
static void check_overlap(json_t *errs, const char *path, json_t *list)
{
    size_t n = json_array_size(list);
    if (n < 2)
        return;
    group_resource *grs = calloc(n, sizeof *grs);
    SK_CHECK_ALLOC(grs);
    for (size_t i = 0; i < n; i++)
        grs[i] = parse_gr(json_string_value(json_array_get(list, i)));
    bool dup = false, overlap = false;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            if (i == j)
                continue;
            bool same_group = strcmp(grs[i].group, grs[j].group) == 0;
            bool same = same_group && strcmp(grs[i].resource, grs[j].resource) == 0;
            /* kube counts the first equal pair as the duplicate and every
             * later one as an overlap */
            if (same && !dup) {
                dup = true;
                continue;
            }
            bool any = strcmp(grs[i].group, "*") == 0 && strcmp(grs[i].resource, "*") == 0;
            if (any || (same_group &&
                        (strcmp(grs[i].resource, "*") == 0 || strcmp(grs[j].resource, "*") == 0)))
                overlap = true;
        }
    }
    if (dup)
        err_invalid_list(errs, path, list, "the same resource cannot be specified multiple times");
    if (overlap)
        err_invalid_list(errs, path, list,
                         "using overlapping resources such as 'secrets' and '*.' in the same "
                         "resource list is not allowed as they will be masked");
    for (size_t i = 0; i < n; i++)
        gr_free(&grs[i]);
    free(grs);
}

static void check_names(json_t *errs, const char *path, json_t *list)
{
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s)
    {
        const char *res = json_string_value(s);
        char at[256];
        snprintf(at, sizeof at, "%s[%zu]", path, i);
        group_resource gr = parse_gr(res);
        const char *why = NULL;
        if (has_capital(res))
            why = "resource name should not contain capital letters";
        else if (strcmp(res, "*") == 0)
            why = "use '*.' to encrypt all the resources from core API group or *.* to encrypt "
                  "all resources";
        else if (strcmp(res, "apiserveripinfo") == 0 || strcmp(res, "serviceipallocations") == 0 ||
                 strcmp(res, "servicenodeportallocations") == 0)
            why = "resources which do not have REST API/s cannot be encrypted";
        else if (strcmp(gr.group, "events.k8s.io") == 0)
            why = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. "
                  "Use 'events' instead in the config file";
        else if (strcmp(gr.group, "extensions") == 0)
            why = "'extensions' group has been removed and cannot be used for encryption";
        else if (strcmp(gr.group, "*") == 0 && strcmp(gr.resource, "*") != 0)
            why = "encrypting the same resource across groups is not supported";
        if (why)
            err_invalid(errs, at, res, why);
        gr_free(&gr);
    }
}

/* The base64 of a key's secret (Go's StdEncoding: padded, CR and LF
 * skipped) into out; false if it is not base64 or longer than MAX_KEY. */
static bool decode_secret(const char *s, unsigned char out[MAX_KEY], size_t *len)
{
    return sodium_base642bin(out, MAX_KEY, s, strlen(s), "\r\n", len, NULL,
                             sodium_base64_VARIANT_ORIGINAL) == 0;
}

/* A key's name and secret; the decoded secret is checked for length and
 * then wiped: keys are kept only once the whole file is valid. */
static void check_key(json_t *errs, const char *path, json_t *key, const size_t *sizes,
                      size_t n_sizes)
{
    char at[320];
    const char *name = json_string_value(json_object_get(key, "name"));
    const char *secret = json_string_value(json_object_get(key, "secret"));
    if (!name || !*name) {
        snprintf(at, sizeof at, "%s.name", path);
        err_required(errs, at, "name is a mandatory field for a key");
    }
    snprintf(at, sizeof at, "%s.secret", path);
    if (!secret || !*secret) {
        err_required(errs, at, "secret is a mandatory field for a key");
        return;
    }
    unsigned char raw[MAX_KEY];
    size_t len = 0;
    /* a secret longer than any accepted key is a length error in kube;
     * sodium refuses it for want of room, so measure it from its text */
    if (!decode_secret(secret, raw, &len)) {
        size_t n = strlen(secret), pad = 0;
        while (pad < n && pad < 2 && secret[n - 1 - pad] == '=')
            pad++;
        bool b64 = n % 4 == 0 && strspn(secret, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                                                "vwxyz0123456789+/=") == n;
        if (!b64) {
            err_invalid(errs, at, "REDACTED", "secrets must be base64 encoded");
            return;
        }
        len = n / 4 * 3 - pad;
    }
    explicit_bzero(raw, sizeof raw);
    bool ok = false;
    for (size_t i = 0; i < n_sizes; i++)
        ok = ok || len == sizes[i];
    if (!ok) {
        sk_buf b = SK_BUF_INIT;
        sk_buf_printf(&b, "secret is not of the expected length, got %zu, expected one of [", len);
        for (size_t i = 0; i < n_sizes; i++)
            sk_buf_printf(&b, i ? " %zu" : "%zu", sizes[i]);
        sk_buf_putc(&b, ']');
        err_invalid(errs, at, "REDACTED", b.data);
        sk_buf_free(&b);
    }
}

static const size_t aes_sizes[] = {16, 24, 32};
static const size_t secretbox_sizes[] = {32};

/* The keys of an aes* or secretbox provider at path ("...aescbc"). */
static void check_keys(json_t *errs, const char *path, json_t *conf, const size_t *sizes,
                       size_t n_sizes)
{
    char at[256];
    snprintf(at, sizeof at, "%s.keys", path);
    json_t *keys = json_is_object(conf) ? json_object_get(conf, "keys") : NULL;
    if (keys && !json_is_array(keys)) {
        err_type(errs, at, "must be a list of keys");
        return;
    }
    if (json_array_size(keys) == 0) {
        err_required(errs, at, "at least one keys is required");
        return;
    }
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        char kat[288];
        snprintf(kat, sizeof kat, "%s[%zu]", at, i);
        if (!json_is_object(k)) {
            err_type(errs, kat, "must be a key (name and secret)");
            continue;
        }
        json_t *name = json_object_get(k, "name"), *secret = json_object_get(k, "secret");
        if ((name && !json_is_string(name) && !json_is_null(name)) ||
            (secret && !json_is_string(secret) && !json_is_null(secret))) {
            err_type(errs, kat, "a key's name and secret must be strings");
            continue;
        }
        check_key(errs, kat, k, sizes, n_sizes);
    }
}

/* Which provider the element names; a null value counts as absent (a nil
 * pointer in kube's struct). Unknown names are ignored as kube's decoder
 * ignores unknown fields. */
static const char *const provider_fields[] = {"kms", "aesgcm", "aescbc", "secretbox", "identity"};
#define N_PROVIDER_FIELDS (sizeof provider_fields / sizeof provider_fields[0])

static void check_provider(json_t *errs, const char *path, json_t *p)
{
    size_t found = 0;
    const char *first = NULL;
    for (size_t i = 0; i < N_PROVIDER_FIELDS; i++) {
        json_t *v = json_is_object(p) ? json_object_get(p, provider_fields[i]) : NULL;
        if (v && !json_is_null(v)) {
            found++;
            first = first ? first : provider_fields[i];
        }
    }
    if (found != 1) {
        /* kube prints its Go struct here; the element as written says the
         * same to a reader */
        char *text = json_dumps(p, JSON_COMPACT | JSON_ENCODE_ANY);
        SK_CHECK_ALLOC(text);
        err_invalid(errs, path, text,
                    found ? "more than one provider specified in a single element, should "
                            "split into different list elements"
                          : "provider does not contain any of the expected providers: KMS, "
                            "AESGCM, AESCBC, Secretbox, Identity");
        free(text);
        if (!found)
            return;
    }
    char at[256];
    snprintf(at, sizeof at, "%s.%s", path, first);
    json_t *conf = json_object_get(p, first);
    if (strcmp(first, "kms") == 0)
        /* not in kube: sqlkube has no KMS client yet */
        err_forbidden(errs, at, "the kms provider is not supported by sqlkube yet");
    else if (strcmp(first, "aesgcm") == 0 || strcmp(first, "aescbc") == 0)
        check_keys(errs, at, conf, aes_sizes, 3);
    else if (strcmp(first, "secretbox") == 0)
        check_keys(errs, at, conf, secretbox_sizes, 1);
}

/* Every check of kube's ValidateEncryptionConfiguration over doc, plus the
 * type checks its decoder makes first. */
static void validate(json_t *errs, json_t *doc)
{
    json_t *resources = json_object_get(doc, "resources");
    if (resources && !json_is_array(resources) && !json_is_null(resources)) {
        err_type(errs, "resources", "must be a list");
        return;
    }
    if (json_array_size(resources) == 0) {
        err_required(errs, "resources", "at least one resources is required");
        return;
    }
    size_t i;
    json_t *conf;
    json_array_foreach(resources, i, conf)
    {
        char r[64], p[64];
        snprintf(r, sizeof r, "resources[%zu].resources", i);
        snprintf(p, sizeof p, "resources[%zu].providers", i);
        json_t *names = json_is_object(conf) ? json_object_get(conf, "resources") : NULL;
        json_t *provs = json_is_object(conf) ? json_object_get(conf, "providers") : NULL;
        bool names_ok = !names || json_is_null(names) || json_is_array(names);
        size_t k;
        json_t *s;
        json_array_foreach(names, k, s) names_ok = names_ok && json_is_string(s);
        if (!names_ok) {
            err_type(errs, r, "must be a list of strings");
        } else {
            if (json_array_size(names) == 0) {
                char d[96];
                snprintf(d, sizeof d, "at least one %s is required", r);
                err_required(errs, r, d);
            }
            check_overlap(errs, r, names);
            check_names(errs, r, names);
        }
        if (provs && !json_is_array(provs) && !json_is_null(provs)) {
            err_type(errs, p, "must be a list");
            continue;
        }
        if (json_array_size(provs) == 0) {
            char d[96];
            snprintf(d, sizeof d, "at least one %s is required", p);
            err_required(errs, p, d);
        }
        json_t *prov;
        json_array_foreach(provs, k, prov)
        {
            char at[96];
            snprintf(at, sizeof at, "%s[%zu]", p, k);
            check_provider(errs, at, prov);
        }
    }
}

/* ---- building the config (only from a validated document) ---- */

static void key_init(enc_key *k, provider_kind kind, json_t *key)
{
    const char *name = json_string_value(json_object_get(key, "name"));
    const char *secret = json_string_value(json_object_get(key, "secret"));
    SK_CHECK(name && secret && decode_secret(secret, k->secret, &k->secret_len));
    k->name = strdup(name);
    SK_CHECK_ALLOC(k->name);
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, ENC_PREFIX "%s:v1:%s:", kind_names[kind], name);
    k->prefix = sk_buf_steal(&b, &k->prefix_len);
}

static void provider_init(provider *p, json_t *elem)
{
    static const provider_kind kinds[] = {P_AESCBC, P_AESGCM, P_SECRETBOX};
    p->kind = P_IDENTITY;
    for (size_t i = 0; i < 3; i++) {
        json_t *conf = json_object_get(elem, kind_names[kinds[i]]);
        if (conf && !json_is_null(conf)) {
            p->kind = kinds[i];
            json_t *keys = json_object_get(conf, "keys");
            p->n_keys = json_array_size(keys);
            p->keys = calloc(p->n_keys, sizeof *p->keys);
            SK_CHECK_ALLOC(p->keys);
            for (size_t k = 0; k < p->n_keys; k++)
                key_init(&p->keys[k], p->kind, json_array_get(keys, k));
        }
    }
}

/* The index of the chain of exactly group/resource; n_chains if none. */
static size_t chain_index(const sk_enc_config *c, const char *group, const char *resource)
{
    size_t i = 0;
    while (i < c->n_chains &&
           (strcmp(c->chains[i].group, group) != 0 || strcmp(c->chains[i].resource, resource) != 0))
        i++;
    return i;
}

/*
 * kube's transformer table: each resource of each element gets the
 * element's providers, appended when the resource was listed before; a
 * resource after an element that listed its group's wildcard or "*.*" is
 * masked, which kube refuses. Returns false with *why (new) on that.
 */
static bool build(sk_enc_config *c, json_t *resources, size_t *first_provider, char **why)
{
    size_t i;
    json_t *conf;
    json_array_foreach(resources, i, conf)
    {
        json_t *provs = json_object_get(conf, "providers");
        size_t n_provs = json_array_size(provs);
        size_t k;
        json_t *s;
        json_array_foreach(json_object_get(conf, "resources"), k, s)
        {
            group_resource gr = parse_gr(json_string_value(s));
            const char *masks[2][2] = {{gr.group, "*"}, {"*", "*"}};
            for (size_t m = 0; m < 2; m++) {
                if (chain_index(c, masks[m][0], masks[m][1]) < c->n_chains) {
                    sk_buf b = SK_BUF_INIT;
                    sk_buf_puts(&b, "error while building transformers: resource \"");
                    gr_yaml(&b, gr.group, gr.resource);
                    sk_buf_puts(&b, "\" is masked by earlier rule \"");
                    gr_yaml(&b, masks[m][0], masks[m][1]);
                    sk_buf_putc(&b, '"');
                    *why = sk_buf_steal(&b, NULL);
                    gr_free(&gr);
                    return false;
                }
            }
            size_t at = chain_index(c, gr.group, gr.resource);
            if (at < c->n_chains) {
                gr_free(&gr);
            } else {
                c->chains = realloc(c->chains, (c->n_chains + 1) * sizeof *c->chains);
                SK_CHECK_ALLOC(c->chains);
                c->chains[c->n_chains++] = (sk_enc_chain){gr.group, gr.resource, 0, NULL};
            }
            sk_enc_chain *ch = &c->chains[at];
            ch->v = realloc(ch->v, (ch->n + n_provs) * sizeof *ch->v);
            SK_CHECK_ALLOC(ch->v);
            for (size_t p = 0; p < n_provs; p++)
                ch->v[ch->n++] = &c->providers[first_provider[i] + p];
        }
    }
    return true;
}

sk_err sk_enc_config_parse(const char *text, size_t len, sk_enc_config **out, char **errmsg)
{
    sk_err err = SK_ERR_INVALID;
    json_t *doc = NULL;
    json_t *errs = json_array();
    SK_CHECK_ALLOC(errs);
    sk_enc_config *c = NULL;
    size_t *first_provider = NULL;
    char *msg = NULL;
    if (sodium_init() < 0) {
        msg = strdup("libsodium failed to initialise");
        err = SK_ERR_INTERNAL;
        goto out;
    }
    if (len == 0) {
        msg = strdup("error while parsing file: encryption provider configuration is empty");
        goto out;
    }
    char *yerr = NULL;
    if (sk_yaml_to_json(text, len, CONFIG_MAX_DEPTH, &doc, &yerr, NULL) != SK_OK) {
        sk_buf b = SK_BUF_INIT;
        sk_buf_printf(&b, "error while parsing file: %s", yerr);
        free(yerr);
        msg = sk_buf_steal(&b, NULL);
        goto out;
    }
    const char *api_version = json_string_value(json_object_get(doc, "apiVersion"));
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    if (!json_is_object(doc) || !kind || !api_version ||
        strcmp(api_version, "apiserver.config.k8s.io/v1") != 0 ||
        strcmp(kind, "EncryptionConfiguration") != 0) {
        /* kube's scheme knows this one kind for config files */
        sk_buf b = SK_BUF_INIT;
        sk_buf_puts(&b, "error while parsing file: no kind ");
        sk_buf_go_quoted(&b, kind ? kind : "");
        sk_buf_puts(&b, " is registered for version ");
        sk_buf_go_quoted(&b, api_version ? api_version : "");
        sk_buf_puts(&b, " (want apiserver.config.k8s.io/v1 EncryptionConfiguration)");
        msg = sk_buf_steal(&b, NULL);
        goto out;
    }
    validate(errs, doc);
    if (json_array_size(errs)) {
        msg = aggregate("error while parsing file", errs);
        goto out;
    }
    json_t *resources = json_object_get(doc, "resources");
    size_t n_res = json_array_size(resources);
    c = calloc(1, sizeof *c);
    first_provider = calloc(n_res, sizeof *first_provider);
    SK_CHECK_ALLOC(c);
    SK_CHECK_ALLOC(first_provider);
    for (size_t i = 0; i < n_res; i++) {
        first_provider[i] = c->n_providers;
        c->n_providers +=
            json_array_size(json_object_get(json_array_get(resources, i), "providers"));
    }
    c->providers = calloc(c->n_providers, sizeof *c->providers);
    SK_CHECK_ALLOC(c->providers);
    for (size_t i = 0; i < n_res; i++) {
        json_t *provs = json_object_get(json_array_get(resources, i), "providers");
        for (size_t p = 0; p < json_array_size(provs); p++)
            provider_init(&c->providers[first_provider[i] + p], json_array_get(provs, p));
    }
    if (!build(c, resources, first_provider, &msg))
        goto out;
    *out = c;
    c = NULL;
    err = SK_OK;
out:
    if (err != SK_OK) {
        SK_CHECK_ALLOC(msg);
        *errmsg = msg;
    }
    sk_enc_config_free(c);
    free(first_provider);
    json_decref(doc);
    json_decref(errs);
    return err;
}

void sk_enc_config_free(sk_enc_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_providers; i++) {
        provider *p = &c->providers[i];
        for (size_t k = 0; k < p->n_keys; k++) {
            explicit_bzero(p->keys[k].secret, sizeof p->keys[k].secret);
            free(p->keys[k].name);
            free(p->keys[k].prefix);
        }
        free(p->keys);
    }
    for (size_t i = 0; i < c->n_chains; i++) {
        free(c->chains[i].group);
        free(c->chains[i].resource);
        free(c->chains[i].v);
    }
    free(c->providers);
    free(c->chains);
    free(c);
}

const sk_enc_chain *sk_enc_lookup(const sk_enc_config *c, const char *group, const char *resource)
{
    size_t at = chain_index(c, group, resource);
    if (at == c->n_chains)
        at = chain_index(c, group, "*");
    if (at == c->n_chains)
        at = chain_index(c, "*", "*");
    return at < c->n_chains ? &c->chains[at] : NULL;
}

/* ---- the providers' bytes ---- */

static gnutls_cipher_algorithm_t aes_alg(provider_kind kind, size_t key_len)
{
    SK_CHECK(key_len == 16 || key_len == 24 || key_len == 32);
    if (kind == P_AESCBC)
        return key_len == 16   ? GNUTLS_CIPHER_AES_128_CBC
               : key_len == 24 ? GNUTLS_CIPHER_AES_192_CBC
                               : GNUTLS_CIPHER_AES_256_CBC;
    return key_len == 16   ? GNUTLS_CIPHER_AES_128_GCM
           : key_len == 24 ? GNUTLS_CIPHER_AES_192_GCM
                           : GNUTLS_CIPHER_AES_256_GCM;
}

/* The provider bytes of plain under key k into a new *raw of *raw_len
 * bytes. GnuTLS refusing a valid key and buffer is a broken library:
 * checked, not reported. */
static void encrypt_raw(provider_kind kind, const enc_key *k, const char *plain, size_t len,
                        const void *aad, size_t aad_len, unsigned char **raw, size_t *raw_len)
{
    gnutls_datum_t key = {(unsigned char *)k->secret, (unsigned)k->secret_len};
    unsigned char *r = NULL;
    size_t n = 0;
    if (kind == P_AESCBC) {
        /* PKCS#7: 1..16 bytes of the pad length, always at least one */
        size_t pad = AES_BLOCK - len % AES_BLOCK;
        n = AES_BLOCK + len + pad;
        r = malloc(n);
        SK_CHECK_ALLOC(r);
        sk_random_bytes(r, AES_BLOCK);
        memcpy(r + AES_BLOCK, plain, len);
        memset(r + AES_BLOCK + len, (int)pad, pad);
        gnutls_datum_t iv = {r, AES_BLOCK};
        gnutls_cipher_hd_t h;
        SK_CHECK(gnutls_cipher_init(&h, aes_alg(kind, k->secret_len), &key, &iv) == 0);
        SK_CHECK(gnutls_cipher_encrypt(h, r + AES_BLOCK, n - AES_BLOCK) == 0);
        gnutls_cipher_deinit(h);
    } else if (kind == P_AESGCM) {
        n = GCM_NONCE + len + GCM_TAG;
        r = malloc(n);
        SK_CHECK_ALLOC(r);
        sk_random_bytes(r, GCM_NONCE);
        gnutls_aead_cipher_hd_t h;
        SK_CHECK(gnutls_aead_cipher_init(&h, aes_alg(kind, k->secret_len), &key) == 0);
        size_t clen = len + GCM_TAG;
        SK_CHECK(gnutls_aead_cipher_encrypt(h, r, GCM_NONCE, aad_len ? aad : "", aad_len, GCM_TAG,
                                            plain, len, r + GCM_NONCE, &clen) == 0);
        SK_CHECK(clen == len + GCM_TAG);
        gnutls_aead_cipher_deinit(h);
    } else {
        SK_CHECK(kind == P_SECRETBOX && k->secret_len == crypto_secretbox_KEYBYTES);
        n = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + len;
        r = malloc(n);
        SK_CHECK_ALLOC(r);
        sk_random_bytes(r, crypto_secretbox_NONCEBYTES);
        SK_CHECK(crypto_secretbox_easy(r + crypto_secretbox_NONCEBYTES,
                                       (const unsigned char *)plain, len, r, k->secret) == 0);
    }
    *raw = r;
    *raw_len = n;
}

/* The plaintext of the provider bytes raw under key k into a new
 * NUL-terminated *out, or NULL with *why a static reason (kube's words). */
static char *decrypt_raw(provider_kind kind, const enc_key *k, const unsigned char *raw, size_t n,
                         const void *aad, size_t aad_len, size_t *out_len, const char **why)
{
    gnutls_datum_t key = {(unsigned char *)k->secret, (unsigned)k->secret_len};
    char *p = NULL;
    size_t plen = 0;
    if (kind == P_AESCBC) {
        if (n < AES_BLOCK) {
            *why = "the stored data was shorter than the required size";
            goto out;
        }
        if ((n - AES_BLOCK) % AES_BLOCK) {
            *why = "the stored data is not a multiple of the block size";
            goto out;
        }
        plen = n - AES_BLOCK;
        p = malloc(plen + 1);
        SK_CHECK_ALLOC(p);
        gnutls_datum_t iv = {(unsigned char *)raw, AES_BLOCK};
        gnutls_cipher_hd_t h;
        SK_CHECK(gnutls_cipher_init(&h, aes_alg(kind, k->secret_len), &key, &iv) == 0);
        SK_CHECK(gnutls_cipher_decrypt2(h, raw + AES_BLOCK, plen, p, plen) == 0);
        gnutls_cipher_deinit(h);
        /* kube's PKCS#7 check: the last byte names the pad length, which
         * must be 1..len and every pad byte must equal it */
        size_t pad = plen ? (unsigned char)p[plen - 1] : 0;
        bool ok = pad != 0 && pad <= plen;
        for (size_t i = 0; ok && i < pad; i++)
            ok = (unsigned char)p[plen - pad + i] == pad;
        if (!ok) {
            *why = pad == 0 || pad > plen ? "invalid PKCS7 data (empty or not padded)"
                                          : "invalid padding on input";
            explicit_bzero(p, plen);
            free(p);
            p = NULL;
            goto out;
        }
        plen -= pad;
    } else if (kind == P_AESGCM) {
        if (n < GCM_NONCE) {
            *why = "the stored data was shorter than the required size";
            goto out;
        }
        if (n < GCM_NONCE + GCM_TAG) {
            *why = "cipher: message authentication failed";
            goto out;
        }
        plen = n - GCM_NONCE - GCM_TAG;
        p = malloc(plen + 1);
        SK_CHECK_ALLOC(p);
        gnutls_aead_cipher_hd_t h;
        SK_CHECK(gnutls_aead_cipher_init(&h, aes_alg(kind, k->secret_len), &key) == 0);
        size_t got = plen;
        int rc = gnutls_aead_cipher_decrypt(h, raw, GCM_NONCE, aad_len ? aad : "", aad_len, GCM_TAG,
                                            raw + GCM_NONCE, n - GCM_NONCE, p, &got);
        gnutls_aead_cipher_deinit(h);
        if (rc != 0) {
            *why = "cipher: message authentication failed";
            free(p);
            p = NULL;
            goto out;
        }
        SK_CHECK(got == plen);
    } else {
        SK_CHECK(kind == P_SECRETBOX);
        if (n < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES) {
            *why = "the stored data was shorter than the required size";
            goto out;
        }
        plen = n - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES;
        p = malloc(plen + 1);
        SK_CHECK_ALLOC(p);
        if (crypto_secretbox_open_easy((unsigned char *)p, raw + crypto_secretbox_NONCEBYTES,
                                       n - crypto_secretbox_NONCEBYTES, raw, k->secret) != 0) {
            *why = "secretbox: the box could not be opened (wrong key or altered data)";
            free(p);
            p = NULL;
            goto out;
        }
    }
    p[plen] = '\0';
    *out_len = plen;
out:
    return p;
}

/* A NUL-terminated copy of n bytes. */
static char *copy_bytes(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    SK_CHECK_ALLOC(p);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

sk_err sk_enc_seal(const sk_enc_chain *ch, const char *plain, size_t len, const void *aad,
                   size_t aad_len, char **out, size_t *out_len)
{
    SK_CHECK(ch && ch->n > 0);
    const provider *p = ch->v[0];
    if (p->kind == P_IDENTITY) {
        *out = copy_bytes(plain, len);
        *out_len = len;
        return SK_OK;
    }
    const enc_key *k = &p->keys[0];
    unsigned char *raw;
    size_t raw_len;
    encrypt_raw(p->kind, k, plain, len, aad, aad_len, &raw, &raw_len);
    size_t b64_len = sodium_base64_ENCODED_LEN(raw_len, sodium_base64_VARIANT_ORIGINAL);
    char *s = malloc(k->prefix_len + b64_len);
    SK_CHECK_ALLOC(s);
    memcpy(s, k->prefix, k->prefix_len);
    sodium_bin2base64(s + k->prefix_len, b64_len, raw, raw_len, sodium_base64_VARIANT_ORIGINAL);
    free(raw);
    *out = s;
    *out_len = k->prefix_len + b64_len - 1;
    return SK_OK;
}

/* Tries key k on the text after its prefix; NULL with *why on failure. */
static char *open_with(const provider *p, const enc_key *k, const char *body, size_t n,
                       const void *aad, size_t aad_len, size_t *out_len, const char **why)
{
    /* base64 never grows when decoded */
    unsigned char *raw = malloc(n + 1);
    SK_CHECK_ALLOC(raw);
    size_t raw_len = 0;
    char *plain = NULL;
    if (sodium_base642bin(raw, n + 1, body, n, NULL, &raw_len, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0)
        *why = "the stored value is not base64 after its prefix";
    else
        plain = decrypt_raw(p->kind, k, raw, raw_len, aad, aad_len, out_len, why);
    free(raw);
    return plain;
}

sk_err sk_enc_open(const sk_enc_chain *ch, const char *stored, size_t len, const void *aad,
                   size_t aad_len, char **out, size_t *out_len, bool *stale, char **errmsg)
{
    SK_CHECK(ch && ch->n > 0);
    bool encrypted =
        len >= strlen(ENC_PREFIX) && memcmp(stored, ENC_PREFIX, strlen(ENC_PREFIX)) == 0;
    json_t *errs = json_array();
    SK_CHECK_ALLOC(errs);
    sk_err err = SK_ERR_INTERNAL;
    for (size_t i = 0; i < ch->n && err != SK_OK; i++) {
        const provider *p = ch->v[i];
        if (p->kind == P_IDENTITY) {
            /* kube's identity reads what has no encryption prefix and
             * steps aside, silently, for what has one */
            if (encrypted)
                continue;
            *out = copy_bytes(stored, len);
            *out_len = len;
            if (stale)
                *stale = i != 0;
            err = SK_OK;
            continue;
        }
        for (size_t k = 0; k < p->n_keys && err != SK_OK; k++) {
            const enc_key *key = &p->keys[k];
            if (len < key->prefix_len || memcmp(stored, key->prefix, key->prefix_len) != 0)
                continue;
            const char *why = NULL;
            size_t n = 0;
            char *plain = open_with(p, key, stored + key->prefix_len, len - key->prefix_len, aad,
                                    aad_len, &n, &why);
            if (!plain) {
                sk_buf b = SK_BUF_INIT;
                sk_buf_printf(&b, "%s key ", kind_names[p->kind]);
                sk_buf_go_quoted(&b, key->name);
                sk_buf_printf(&b, ": %s", why);
                SK_CHECK(json_array_append_new(errs, json_string(b.data)) == 0);
                sk_buf_free(&b);
                continue;
            }
            *out = plain;
            *out_len = n;
            if (stale)
                *stale = i != 0 || k != 0;
            err = SK_OK;
        }
    }
    if (err != SK_OK) {
        if (json_array_size(errs)) {
            *errmsg = aggregate("decrypting the stored value", errs);
        } else {
            /* name the provider and key that wrote it, never the data */
            sk_buf b = SK_BUF_INIT;
            sk_buf_puts(&b, "no matching prefix found");
            if (encrypted) {
                size_t end = 0, colons = 0;
                while (end < len && end < 256 && colons < 5)
                    colons += stored[end++] == ':';
                sk_buf_puts(&b, ": the value was written by ");
                char *pre = copy_bytes(stored, end);
                sk_buf_go_quoted(&b, pre);
                free(pre);
                sk_buf_puts(&b, ", which no configured provider and key reads");
            }
            *errmsg = sk_buf_steal(&b, NULL);
        }
    }
    json_decref(errs);
    return err;
}

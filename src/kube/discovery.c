/*
 * discovery.c - builds the legacy discovery documents from the registry.
 *
 * Invariants: the documents are serialized exactly once (pthread_once) and
 * never change afterwards, so the borrowed text pointers are safe to share
 * between HTTP threads without locking. Shapes follow kube-apiserver 1.32:
 * APIGroup omits serverAddressByClientCIDRs (omitempty there), APIVersions
 * always carries the field because the Python client rejects a missing one.
 */
#include "kube/discovery.h"

#include "core/check.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef SK_VERSION
#error "SK_VERSION must be defined by the build"
#endif

#if defined(__x86_64__)
#define SK_ARCH "amd64"
#elif defined(__aarch64__)
#define SK_ARCH "arm64"
#else
#define SK_ARCH "unknown"
#endif

/* Verbs a resource lacks relative to the full set, keyed by group/resource. */
static const struct {
    const char *group;
    const char *resource;
    unsigned missing;
} verb_exceptions[] = {
    {"", "namespaces", SK_VERB_DELETECOLLECTION},
};

static const char *const verb_names[] = {"create", "delete", "deletecollection", "get",
                                         "list",   "patch",  "update",           "watch"};

#define ALL_VERBS ((1u << (sizeof verb_names / sizeof verb_names[0])) - 1)

typedef struct doc {
    char *text;
    size_t len;
} doc;

static struct {
    sk_discovery_gv *gvs;
    size_t n_gvs;
    doc version, core_versions, groups;
    doc *group_docs;    /* per gv; set only on the first gv of each non-core group */
    doc *resource_docs; /* per gv */
} st;

static pthread_once_t once = PTHREAD_ONCE_INIT;

unsigned sk_discovery_verbs(const sk_resource *r)
{
    unsigned verbs = ALL_VERBS;
    for (size_t i = 0; i < sizeof verb_exceptions / sizeof verb_exceptions[0]; i++)
        if (strcmp(verb_exceptions[i].group, r->group) == 0 &&
            strcmp(verb_exceptions[i].resource, r->resource) == 0)
            verbs &= ~verb_exceptions[i].missing;
    return verbs;
}

/* Serializes and steals j. Compact output keeps responses small; jansson
 * preserves insertion order, so the bytes are deterministic. */
static doc doc_from(json_t *j)
{
    SK_CHECK_ALLOC(j);
    doc d;
    d.text = json_dumps(j, JSON_COMPACT);
    SK_CHECK_ALLOC(d.text);
    d.len = strlen(d.text);
    json_decref(j);
    return d;
}

static const char *doc_text(const doc *d, size_t *len)
{
    if (!d || !d->text)
        return NULL;
    if (len)
        *len = d->len;
    return d->text;
}

static json_t *doc_json(const doc *d)
{
    if (!d || !d->text)
        return NULL;
    json_t *j = json_loadb(d->text, d->len, 0, NULL);
    SK_CHECK_ALLOC(j);
    return j;
}

/* kube-apiserver's storageVersionHash: base64(sha256("group/version/kind")[:8]). */
static json_t *storage_version_hash(const sk_resource *r)
{
    char gvk[256];
    int n = snprintf(gvk, sizeof gvk, "%s/%s/%s", r->group, r->version, r->kind);
    SK_CHECK(n > 0 && (size_t)n < sizeof gvk);
    unsigned char digest[32];
    SK_CHECK(gnutls_hash_fast(GNUTLS_DIG_SHA256, gvk, (size_t)n, digest) == 0);
    gnutls_datum_t in = {digest, 8}, out = {NULL, 0};
    SK_CHECK(gnutls_base64_encode2(&in, &out) == 0);
    json_t *s = json_stringn((const char *)out.data, out.size);
    gnutls_free(out.data);
    SK_CHECK_ALLOC(s);
    return s;
}

static json_t *string_array(const char *const *items)
{
    json_t *a = json_array();
    SK_CHECK_ALLOC(a);
    for (; *items; items++)
        SK_CHECK(json_array_append_new(a, json_string(*items)) == 0);
    return a;
}

static json_t *api_resource(const sk_resource *r)
{
    json_t *verbs = json_array();
    SK_CHECK_ALLOC(verbs);
    unsigned set = sk_discovery_verbs(r);
    for (size_t i = 0; i < sizeof verb_names / sizeof verb_names[0]; i++)
        if (set & (1u << i))
            SK_CHECK(json_array_append_new(verbs, json_string(verb_names[i])) == 0);
    json_t *o =
        json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", r->resource, "singularName", r->singular,
                  "namespaced", r->namespaced, "kind", r->kind, "verbs", verbs);
    SK_CHECK_ALLOC(o);
    if (r->short_names[0])
        SK_CHECK(json_object_set_new(o, "shortNames", string_array(r->short_names)) == 0);
    SK_CHECK(json_object_set_new(o, "storageVersionHash", storage_version_hash(r)) == 0);
    return o;
}

static json_t *resource_list(const sk_discovery_gv *gv)
{
    json_t *items = json_array();
    SK_CHECK_ALLOC(items);
    size_t n;
    const sk_resource *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].group, gv->group) == 0 && strcmp(all[i].version, gv->version) == 0)
            SK_CHECK(json_array_append_new(items, api_resource(&all[i])) == 0);
    return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                     "groupVersion", gv->api_version, "resources", items);
}

static json_t *gv_ref(const sk_discovery_gv *gv)
{
    return json_pack("{s:s, s:s}", "groupVersion", gv->api_version, "version", gv->version);
}

/* The APIGroup for the group of st.gvs[first]; the first version listed is preferred. */
static json_t *api_group(size_t first, int with_type_meta)
{
    const char *group = st.gvs[first].group;
    json_t *versions = json_array();
    SK_CHECK_ALLOC(versions);
    for (size_t i = first; i < st.n_gvs; i++)
        if (strcmp(st.gvs[i].group, group) == 0)
            SK_CHECK(json_array_append_new(versions, gv_ref(&st.gvs[i])) == 0);
    json_t *g = with_type_meta ? json_pack("{s:s, s:s}", "kind", "APIGroup", "apiVersion", "v1")
                               : json_object();
    SK_CHECK_ALLOC(g);
    SK_CHECK(json_object_set_new(g, "name", json_string(group)) == 0);
    SK_CHECK(json_object_set_new(g, "versions", versions) == 0);
    SK_CHECK(json_object_set_new(g, "preferredVersion", gv_ref(&st.gvs[first])) == 0);
    return g;
}

static int is_first_of_group(size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(st.gvs[j].group, st.gvs[i].group) == 0)
            return 0;
    return 1;
}

static void collect_gvs(void)
{
    size_t n;
    const sk_resource *all = sk_registry_all(&n);
    st.gvs = calloc(n, sizeof *st.gvs);
    SK_CHECK_ALLOC(st.gvs);
    for (size_t i = 0; i < n; i++) {
        const char *av = sk_registry_api_version(&all[i]);
        size_t j = 0;
        while (j < st.n_gvs && strcmp(st.gvs[j].api_version, av) != 0)
            j++;
        if (j == st.n_gvs)
            st.gvs[st.n_gvs++] = (sk_discovery_gv){all[i].group, all[i].version, av};
    }
}

static void build(void)
{
    collect_gvs();

    /* buildDate is fixed so that builds are reproducible; gitVersion carries
     * the real release and kubectl only displays it. */
    st.version = doc_from(json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor", "32", "gitVersion",
        "v1.32.0-sqlkube." SK_VERSION, "gitCommit", "", "gitTreeState", "clean", "buildDate",
        "1970-01-01T00:00:00Z", "goVersion", "", "compiler", "gcc", "platform", "linux/" SK_ARCH));

    json_t *core = json_array(), *groups = json_array();
    SK_CHECK_ALLOC(core);
    SK_CHECK_ALLOC(groups);
    st.group_docs = calloc(st.n_gvs, sizeof *st.group_docs);
    st.resource_docs = calloc(st.n_gvs, sizeof *st.resource_docs);
    SK_CHECK_ALLOC(st.group_docs);
    SK_CHECK_ALLOC(st.resource_docs);
    for (size_t i = 0; i < st.n_gvs; i++) {
        st.resource_docs[i] = doc_from(resource_list(&st.gvs[i]));
        if (st.gvs[i].group[0] == '\0') {
            SK_CHECK(json_array_append_new(core, json_string(st.gvs[i].version)) == 0);
        } else if (is_first_of_group(i)) {
            SK_CHECK(json_array_append_new(groups, api_group(i, 0)) == 0);
            st.group_docs[i] = doc_from(api_group(i, 1));
        }
    }
    /* The server address depends on how the client reached us, which this
     * module cannot know; an empty list is valid for every client. */
    st.core_versions = doc_from(json_pack("{s:s, s:o, s:[]}", "kind", "APIVersions", "versions",
                                          core, "serverAddressByClientCIDRs"));
    st.groups = doc_from(
        json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", groups));
}

const sk_discovery_gv *sk_discovery_gvs(size_t *n_out)
{
    pthread_once(&once, build);
    *n_out = st.n_gvs;
    return st.gvs;
}

static const doc *find_group_doc(const char *group)
{
    pthread_once(&once, build);
    for (size_t i = 0; i < st.n_gvs; i++)
        if (st.group_docs[i].text && strcmp(st.gvs[i].group, group) == 0)
            return &st.group_docs[i];
    return NULL;
}

static const doc *find_resources_doc(const char *group, const char *version)
{
    pthread_once(&once, build);
    for (size_t i = 0; i < st.n_gvs; i++)
        if (strcmp(st.gvs[i].group, group) == 0 && strcmp(st.gvs[i].version, version) == 0)
            return &st.resource_docs[i];
    return NULL;
}

const char *sk_discovery_version_text(size_t *len)
{
    pthread_once(&once, build);
    return doc_text(&st.version, len);
}

const char *sk_discovery_core_versions_text(size_t *len)
{
    pthread_once(&once, build);
    return doc_text(&st.core_versions, len);
}

const char *sk_discovery_groups_text(size_t *len)
{
    pthread_once(&once, build);
    return doc_text(&st.groups, len);
}

const char *sk_discovery_group_text(const char *group, size_t *len)
{
    return doc_text(find_group_doc(group), len);
}

const char *sk_discovery_resources_text(const char *group, const char *version, size_t *len)
{
    return doc_text(find_resources_doc(group, version), len);
}

json_t *sk_discovery_version(void)
{
    pthread_once(&once, build);
    return doc_json(&st.version);
}

json_t *sk_discovery_core_versions(void)
{
    pthread_once(&once, build);
    return doc_json(&st.core_versions);
}

json_t *sk_discovery_groups(void)
{
    pthread_once(&once, build);
    return doc_json(&st.groups);
}

json_t *sk_discovery_group(const char *group)
{
    return doc_json(find_group_doc(group));
}

json_t *sk_discovery_resources(const char *group, const char *version)
{
    return doc_json(find_resources_doc(group, version));
}

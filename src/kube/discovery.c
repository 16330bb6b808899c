/*
 * discovery.c - builds the discovery documents from the registry.
 *
 * Invariants: the documents are serialized once per registry generation
 * (kube/registry.h: custom resources come and go) into one immutable state,
 * published through an atomic pointer and rebuilt by the first request that
 * sees a newer generation (under a mutex); a replaced state is retired,
 * never freed, so the borrowed text pointers are safe to share between
 * HTTP threads without locking (the bound is the registry's: one state per
 * change of what is served). Shapes follow kube-apiserver 1.32:
 * APIGroup omits serverAddressByClientCIDRs (omitempty there), APIVersions
 * always carries the field because the Python client rejects a missing one.
 * Groups, versions and resources come in registry order, which is
 * kube-aggregator's: kubectl resolves a name two groups serve ("events",
 * "ev") to the first group that lists it.
 */
#include "kube/discovery.h"

#include "core/check.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

typedef struct doc {
    char *text;
    size_t len;
} doc;

/* Aggregated discovery versions, in the order they are offered. */
static const char *const aggregated_versions[] = {"v2", "v2beta1"};
#define N_AGGREGATED (sizeof aggregated_versions / sizeof aggregated_versions[0])

typedef struct state {
    unsigned long generation; /* the registry's, when built */
    const struct state *prev; /* the state it replaced: retired, kept reachable */
    sk_discovery_gv *gvs;
    size_t n_gvs;
    doc version, core_versions, groups;
    doc *group_docs;    /* per gv; set only on the first gv of each non-core group */
    doc *resource_docs; /* per gv */
    doc aggregated[2][N_AGGREGATED]; /* [core][version] */
} state;

static _Atomic(const state *) published;
static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;
static state *st; /* the state being built, under build_mu */

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

static json_t *verb_array(unsigned set)
{
    json_t *verbs = json_array();
    SK_CHECK_ALLOC(verbs);
    for (unsigned i = 0; i < SK_VERB_COUNT; i++)
        if (set & (1u << i))
            SK_CHECK(json_array_append_new(verbs, json_string(sk_registry_verb_name(1u << i))) ==
                     0);
    return verbs;
}

static void set(json_t *o, const char *key, json_t *value)
{
    SK_CHECK_ALLOC(value);
    SK_CHECK(json_object_set_new(o, key, value) == 0);
}

/* Resources not kept in storage have no storage version to hash. */
static int is_stored(const sk_resource *r)
{
    return (r->verbs & SK_VERB_GET) && strcmp(r->resource, "componentstatuses") != 0;
}

static json_t *api_resource(const sk_resource *r)
{
    json_t *o = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", r->resource, "singularName",
                          r->singular, "namespaced", r->namespaced, "kind", r->kind, "verbs",
                          verb_array(r->verbs));
    SK_CHECK_ALLOC(o);
    if (r->short_names[0])
        set(o, "shortNames", string_array(r->short_names));
    if (r->categories[0])
        set(o, "categories", string_array(r->categories));
    if (is_stored(r))
        set(o, "storageVersionHash", storage_version_hash(r->stored_as));
    return o;
}

/* "pods/status": the kind's group and version only where they differ. */
static json_t *api_subresource(const sk_resource *r, const sk_subresource *sr)
{
    char name[128];
    snprintf(name, sizeof name, "%s/%s", r->resource, sr->name);
    json_t *o = json_pack("{s:s, s:s, s:b}", "name", name, "singularName", "", "namespaced",
                          r->namespaced);
    SK_CHECK_ALLOC(o);
    if (strcmp(sr->group, r->group) != 0 || strcmp(sr->version, r->version) != 0) {
        set(o, "group", json_string(sr->group));
        set(o, "version", json_string(sr->version));
    }
    set(o, "kind", json_string(sr->kind));
    set(o, "verbs", verb_array(sr->verbs));
    return o;
}

static json_t *resource_list(const sk_discovery_gv *gv)
{
    json_t *items = json_array();
    SK_CHECK_ALLOC(items);
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        const sk_resource *r = all[i];
        if (strcmp(r->group, gv->group) != 0 || strcmp(r->version, gv->version) != 0)
            continue;
        SK_CHECK(json_array_append_new(items, api_resource(r)) == 0);
        for (size_t k = 0; k < r->n_subresources; k++)
            SK_CHECK(json_array_append_new(items, api_subresource(r, &r->subresources[k])) == 0);
    }
    return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                     "groupVersion", gv->api_version, "resources", items);
}

/* ---- aggregated discovery ------------------------------------------------ */

static int is_first_of_group(size_t i);

static json_t *gvk(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "kind", kind);
}

static json_t *resource_discovery(const sk_resource *r)
{
    json_t *o = json_pack("{s:s, s:o, s:s, s:s, s:o}", "resource", r->resource, "responseKind",
                          gvk(r->group, r->version, r->kind), "scope",
                          r->namespaced ? "Namespaced" : "Cluster", "singularResource",
                          r->singular, "verbs", verb_array(r->verbs));
    SK_CHECK_ALLOC(o);
    if (r->short_names[0])
        set(o, "shortNames", string_array(r->short_names));
    if (r->categories[0])
        set(o, "categories", string_array(r->categories));
    if (r->n_subresources) {
        json_t *subs = json_array();
        SK_CHECK_ALLOC(subs);
        for (size_t k = 0; k < r->n_subresources; k++) {
            const sk_subresource *sr = &r->subresources[k];
            json_t *so = json_pack("{s:s, s:o, s:o}", "subresource", sr->name, "responseKind",
                                   gvk(sr->group, sr->version, sr->kind), "verbs",
                                   verb_array(sr->verbs));
            SK_CHECK_ALLOC(so);
            SK_CHECK(json_array_append_new(subs, so) == 0);
        }
        set(o, "subresources", subs);
    }
    return o;
}

/* One APIGroupDiscovery: the group's versions, preferred first (registry order). */
static json_t *group_discovery(const char *group)
{
    json_t *versions = json_array();
    SK_CHECK_ALLOC(versions);
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < st->n_gvs; i++) {
        const sk_discovery_gv *gv = &st->gvs[i];
        if (strcmp(gv->group, group) != 0)
            continue;
        json_t *resources = json_array();
        SK_CHECK_ALLOC(resources);
        for (size_t k = 0; k < n; k++)
            if (strcmp(all[k]->group, group) == 0 && strcmp(all[k]->version, gv->version) == 0)
                SK_CHECK(json_array_append_new(resources, resource_discovery(all[k])) == 0);
        json_t *v = json_pack("{s:s, s:o, s:s}", "version", gv->version, "resources", resources,
                              "freshness", "Current");
        SK_CHECK_ALLOC(v);
        SK_CHECK(json_array_append_new(versions, v) == 0);
    }
    /* ObjectMeta's zero creationTimestamp marshals as null; core has no name. */
    json_t *meta = json_pack("{s:n}", "creationTimestamp");
    SK_CHECK_ALLOC(meta);
    if (*group)
        set(meta, "name", json_string(group));
    return json_pack("{s:o, s:o}", "metadata", meta, "versions", versions);
}

static json_t *aggregated_list(int core, const char *version)
{
    json_t *items = json_array();
    SK_CHECK_ALLOC(items);
    for (size_t i = 0; i < st->n_gvs; i++) {
        int is_core = !*st->gvs[i].group;
        if (is_core == core && (core || is_first_of_group(i)))
            SK_CHECK(json_array_append_new(items, group_discovery(st->gvs[i].group)) == 0);
    }
    char av[64];
    snprintf(av, sizeof av, "apidiscovery.k8s.io/%s", version);
    return json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList", "apiVersion", av,
                     "metadata", "items", items);
}

static json_t *gv_ref(const sk_discovery_gv *gv)
{
    return json_pack("{s:s, s:s}", "groupVersion", gv->api_version, "version", gv->version);
}

/* The APIGroup for the group of st->gvs[first]; the first version listed
 * (registry order) is the preferred one. */
static json_t *api_group(size_t first, int with_type_meta)
{
    const char *group = st->gvs[first].group;
    json_t *versions = json_array();
    SK_CHECK_ALLOC(versions);
    for (size_t i = first; i < st->n_gvs; i++)
        if (strcmp(st->gvs[i].group, group) == 0)
            SK_CHECK(json_array_append_new(versions, gv_ref(&st->gvs[i])) == 0);
    json_t *g = with_type_meta ? json_pack("{s:s, s:s}", "kind", "APIGroup", "apiVersion", "v1")
                               : json_object();
    SK_CHECK_ALLOC(g);
    SK_CHECK(json_object_set_new(g, "name", json_string(group)) == 0);
    SK_CHECK(json_object_set_new(g, "versions", versions) == 0);
    SK_CHECK(json_object_set_new(g, "preferredVersion", gv_ref(&st->gvs[first])) == 0);
    return g;
}

static int is_first_of_group(size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(st->gvs[j].group, st->gvs[i].group) == 0)
            return 0;
    return 1;
}

static void collect_gvs(void)
{
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    st->gvs = calloc(n, sizeof *st->gvs);
    SK_CHECK_ALLOC(st->gvs);
    for (size_t i = 0; i < n; i++) {
        const char *av = all[i]->api_version;
        size_t j = 0;
        while (j < st->n_gvs && strcmp(st->gvs[j].api_version, av) != 0)
            j++;
        if (j == st->n_gvs)
            st->gvs[st->n_gvs++] = (sk_discovery_gv){all[i]->group, all[i]->version, av};
    }
}

static void build(void)
{
    collect_gvs();

    /* buildDate is fixed so that builds are reproducible; gitVersion carries
     * the real release and kubectl only displays it. */
    st->version = doc_from(json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor", "32", "gitVersion",
        "v1.32.0-sqlkube." SK_VERSION, "gitCommit", "", "gitTreeState", "clean", "buildDate",
        "1970-01-01T00:00:00Z", "goVersion", "", "compiler", "gcc", "platform", "linux/" SK_ARCH));

    json_t *core = json_array(), *groups = json_array();
    SK_CHECK_ALLOC(core);
    SK_CHECK_ALLOC(groups);
    st->group_docs = calloc(st->n_gvs, sizeof *st->group_docs);
    st->resource_docs = calloc(st->n_gvs, sizeof *st->resource_docs);
    SK_CHECK_ALLOC(st->group_docs);
    SK_CHECK_ALLOC(st->resource_docs);
    for (size_t i = 0; i < st->n_gvs; i++) {
        st->resource_docs[i] = doc_from(resource_list(&st->gvs[i]));
        if (st->gvs[i].group[0] == '\0') {
            SK_CHECK(json_array_append_new(core, json_string(st->gvs[i].version)) == 0);
        } else if (is_first_of_group(i)) {
            SK_CHECK(json_array_append_new(groups, api_group(i, 0)) == 0);
            st->group_docs[i] = doc_from(api_group(i, 1));
        }
    }
    for (int core = 0; core < 2; core++)
        for (size_t v = 0; v < N_AGGREGATED; v++)
            st->aggregated[core][v] = doc_from(aggregated_list(core, aggregated_versions[v]));
    /* The server address depends on how the client reached us, which this
     * module cannot know; an empty list is valid for every client. */
    st->core_versions = doc_from(json_pack("{s:s, s:o, s:[]}", "kind", "APIVersions", "versions",
                                          core, "serverAddressByClientCIDRs"));
    st->groups = doc_from(
        json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", groups));
}

/* The documents of the registry's current generation. */
static const state *current(void)
{
    unsigned long gen = sk_registry_generation();
    const state *s = atomic_load_explicit(&published, memory_order_acquire);
    if (s && s->generation == gen)
        return s;
    pthread_mutex_lock(&build_mu);
    s = atomic_load(&published);
    if (!s || s->generation != gen) {
        st = calloc(1, sizeof *st);
        SK_CHECK_ALLOC(st);
        st->generation = gen;
        st->prev = s;
        build();
        atomic_store_explicit(&published, st, memory_order_release);
        s = st;
        st = NULL;
    }
    pthread_mutex_unlock(&build_mu);
    return s;
}

const sk_discovery_gv *sk_discovery_gvs(size_t *n_out)
{
    const state *s = current();
    *n_out = s->n_gvs;
    return s->gvs;
}

static const doc *find_group_doc(const char *group)
{
    const state *s = current();
    for (size_t i = 0; i < s->n_gvs; i++)
        if (s->group_docs[i].text && strcmp(s->gvs[i].group, group) == 0)
            return &s->group_docs[i];
    return NULL;
}

static const doc *find_resources_doc(const char *group, const char *version)
{
    const state *s = current();
    for (size_t i = 0; i < s->n_gvs; i++)
        if (strcmp(s->gvs[i].group, group) == 0 && strcmp(s->gvs[i].version, version) == 0)
            return &s->resource_docs[i];
    return NULL;
}

const char *sk_discovery_version_text(size_t *len)
{
    const state *s = current();
    return doc_text(&s->version, len);
}

const char *sk_discovery_core_versions_text(size_t *len)
{
    const state *s = current();
    return doc_text(&s->core_versions, len);
}

const char *sk_discovery_groups_text(size_t *len)
{
    const state *s = current();
    return doc_text(&s->groups, len);
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
    const state *s = current();
    return doc_json(&s->version);
}

json_t *sk_discovery_core_versions(void)
{
    const state *s = current();
    return doc_json(&s->core_versions);
}

json_t *sk_discovery_groups(void)
{
    const state *s = current();
    return doc_json(&s->groups);
}

json_t *sk_discovery_group(const char *group)
{
    return doc_json(find_group_doc(group));
}

json_t *sk_discovery_resources(const char *group, const char *version)
{
    return doc_json(find_resources_doc(group, version));
}

/* Whether one media range of an Accept header names aggregated discovery
 * in version v ("v2"); *legacy set if it accepts plain JSON instead. */
static int media_matches(const char *m, size_t len, const char **v, int *legacy)
{
    char buf[256];
    if (len >= sizeof buf)
        return 0;
    memcpy(buf, m, len);
    buf[len] = '\0';
    char *save = NULL, *part = strtok_r(buf, ";", &save);
    if (!part)
        return 0;
    while (*part == ' ')
        part++;
    size_t tl = strcspn(part, " ");
    int json = (tl == 16 && strncasecmp(part, "application/json", 16) == 0);
    int any = (tl == 3 && strncmp(part, "*/*", 3) == 0) ||
              (tl == 13 && strncasecmp(part, "application/*", 13) == 0);
    const char *g = NULL, *ver = NULL, *as = NULL;
    while ((part = strtok_r(NULL, ";", &save))) {
        while (*part == ' ')
            part++;
        char *eq = strchr(part, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char *val = eq + 1;
        val[strcspn(val, " ")] = '\0';
        if (strcmp(part, "g") == 0)
            g = val;
        else if (strcmp(part, "v") == 0)
            ver = val;
        else if (strcmp(part, "as") == 0)
            as = val;
    }
    if (!g && !ver && !as) {
        *legacy = json || any;
        return 0;
    }
    if (!json || !g || !ver || !as || strcmp(g, "apidiscovery.k8s.io") != 0 ||
        strcmp(as, "APIGroupDiscoveryList") != 0)
        return 0;
    for (size_t i = 0; i < N_AGGREGATED; i++)
        if (strcmp(ver, aggregated_versions[i]) == 0) {
            *v = aggregated_versions[i];
            return 1;
        }
    return 0;
}

const char *sk_discovery_aggregated_version(const char *accept)
{
    if (!accept)
        return NULL;
    const char *p = accept;
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *v = NULL;
        int legacy = 0;
        if (media_matches(p, len, &v, &legacy))
            return v;
        if (legacy)
            return NULL;
        p += len + (p[len] == ',');
    }
    return NULL;
}

static const doc *aggregated_doc(int core, const char *version)
{
    const state *s = current();
    for (size_t i = 0; i < N_AGGREGATED; i++)
        if (version && strcmp(version, aggregated_versions[i]) == 0)
            return &s->aggregated[core ? 1 : 0][i];
    return NULL;
}

json_t *sk_discovery_aggregated(int core, const char *version)
{
    return doc_json(aggregated_doc(core, version));
}

const char *sk_discovery_aggregated_text(int core, const char *version, size_t *len)
{
    return doc_text(aggregated_doc(core, version), len);
}

const char *sk_discovery_aggregated_media(const char *version)
{
    if (version && strcmp(version, "v2beta1") == 0)
        return "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
    return "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
}

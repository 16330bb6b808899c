/*
 * test_authz.c - api/authz.c over a real store and watch cache: a request
 * that carries an identity is authorized before its verb runs (403 with
 * kube's message and details when RBAC does not allow it), a binding
 * written to the store counts once the cache applied it, with no restart,
 * system:masters and AlwaysAllow pass, and a request without an identity
 * is not checked (authentication is not built yet: this is how its
 * identity will reach the authorizer).
 */
#include "api/api.h"
#include "api/call.h"
#include "cache/cache.h"
#include "kube/registry.h"
#include "read/reader.h"
#include "store/store.h"
#include "watch/hub.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h expects the four headers above to be included first. */
#include <cmocka.h>

typedef struct fixture {
    char dir[64];
    sk_store *store;
    sk_cache *cache;
    sk_reader *reader;
    sk_watch_hub *hub;
    sk_api *rbac, *always;
} fixture;

static void notify(void *arg)
{
    sk_watch_hub_notify(arg);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sk-authz-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    char url[128], *msg = NULL;
    snprintf(url, sizeof url, "sqlite:%s/db", f->dir);
    assert_int_equal(sk_store_open(url, &f->store, &msg), SK_OK);
    size_t n;
    const char *const *storages = sk_registry_storages(&n);
    sk_cache_config cfg = {.resources = storages, .n_resources = (int)n};
    f->hub = sk_watch_hub_new();
    assert_int_equal(sk_cache_new(f->store, &cfg, notify, f->hub, &f->cache), SK_OK);
    f->reader = sk_reader_new(f->store, f->cache);
    sk_api_deps deps = {.store = f->store, .cache = f->cache, .reader = f->reader, .hub = f->hub};
    /* Requests start trusted (the plain-HTTP identity) so that none is
     * refused by authentication; each test then sets the user it checks. */
    sk_api_config rbac = {.authn.trust_unauthenticated = 1},
                  always = {.always_allow = 1, .authn.trust_unauthenticated = 1};
    f->rbac = sk_api_new(&deps, &rbac);
    f->always = sk_api_new(&deps, &always);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sk_api_free(f->rbac);
    sk_api_free(f->always);
    sk_watch_hub_stop(f->hub);
    sk_cache_free(f->cache);
    sk_reader_free(f->reader);
    sk_watch_hub_free(f->hub);
    sk_store_close(f->store);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* ---- a request, as the HTTP layer hands it over ---- */

static const char *field_selector; /* of the next request, NULL: none */

static const char *query(void *ctx, const char *key)
{
    if (strcmp(key, "fieldSelector") == 0)
        return field_selector;
    return strcmp(key, "resourceVersion") == 0 ? "0" : NULL; /* any: served at once */
}

static const char *header(void *ctx, const char *key)
{
    return NULL;
}

static int gone(void *ctx)
{
    return 0;
}

static void wake(void *arg)
{
}

/* Runs GET path as user on api; returns the status, and the
 * body in body_out (new, free()) when asked. */
static int get(sk_api *api, const char *path, const sk_user *user, char **body_out)
{
    char copy[256], *segs[16], *save = NULL;
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", path);
    for (char *s = strtok_r(copy, "/", &save); s && n < 16; s = strtok_r(NULL, "/", &save))
        segs[n++] = s;
    sk_http_req req = {.method = "GET", .segs = (const char *const *)segs, .n_segs = n,
                       .query = query, .header = header, .client_gone = gone};
    sk_api_call *call = sk_api_call_start(api, &req, wake, NULL);
    call->user = user;
    assert_int_equal(sk_api_call_step(call), 1);
    sk_api_response r;
    sk_api_call_response(call, &r);
    if (body_out) {
        assert_false(r.streaming); /* lists stream; the tests read replies that do not */
        *body_out = strndup(r.body, r.body_len);
    }
    int status = r.status;
    sk_api_call_free(call);
    return status;
}

static void put(fixture *f, const char *resource, const char *ns, const char *json)
{
    const sk_resource *r = sk_registry_find("rbac.authorization.k8s.io", "v1", resource);
    json_error_t e;
    json_t *obj = json_loads(json, 0, &e);
    assert_non_null(obj);
    char *name =
        strdup(json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")));
    sk_write w = {.op = SK_WRITE_CREATE, .resource = r->storage, .ns = ns, .name = name,
                  .object = obj}; /* the store takes obj */
    sk_row row = {0};
    assert_int_equal(sk_store_write(f->store, &w, &row), SK_OK);
    sk_cache_state st;
    assert_int_equal(sk_cache_wait(f->cache, row.rev, 5000, &st), SK_OK);
    sk_row_clear(&row);
    free(name);
}

static void test_forbidden_until_bound(void **state)
{
    fixture *f = *state;
    const char *groups[] = {"system:authenticated"};
    sk_user bob = {.name = "bob", .groups = groups, .n_groups = 1};
    char *body = NULL;
    const char *cm = "/api/v1/namespaces/ns1/configmaps/x";
    assert_int_equal(get(f->rbac, cm, &bob, &body), 403);
    json_t *st = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "configmaps \"x\" is forbidden: User \"bob\" cannot get resource "
                        "\"configmaps\" in API group \"\" in the namespace \"ns1\"");
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "Forbidden");
    json_t *details = json_object_get(st, "details");
    assert_string_equal(json_string_value(json_object_get(details, "name")), "x");
    assert_string_equal(json_string_value(json_object_get(details, "kind")), "configmaps");
    json_decref(st);
    free(body);
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns1/configmaps", &bob, &body), 403);
    assert_non_null(strstr(body, "configmaps is forbidden: User \\\"bob\\\" cannot list"));
    free(body);
    assert_int_equal(get(f->rbac, "/apis/apps/v1/deployments", &bob, &body), 403);
    assert_non_null(strstr(body, "deployments.apps is forbidden: User \\\"bob\\\" cannot list "
                                 "resource \\\"deployments\\\" in API group \\\"apps\\\" at the "
                                 "cluster scope"));
    free(body);

    /* Bound: the verb runs (and finds nothing). No restart, no rebuild by hand. */
    put(f, "roles", "ns1",
        "{\"kind\":\"Role\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
        "\"metadata\":{\"name\":\"r\",\"namespace\":\"ns1\",\"uid\":\"u1\"},"
        "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"get\"]}]}");
    assert_int_equal(get(f->rbac, cm, &bob, NULL), 403);
    put(f, "rolebindings", "ns1",
        "{\"kind\":\"RoleBinding\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
        "\"metadata\":{\"name\":\"b\",\"namespace\":\"ns1\",\"uid\":\"u2\"},"
        "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"r\"},"
        "\"subjects\":[{\"kind\":\"Group\",\"name\":\"system:authenticated\"}]}");
    assert_int_equal(get(f->rbac, cm, &bob, NULL), 404);
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns1/configmaps", &bob, NULL), 403);
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns2/configmaps/x", &bob, NULL), 403);

    /* A list pinned to one name by its field selector is that name's list. */
    put(f, "roles", "ns1",
        "{\"kind\":\"Role\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
        "\"metadata\":{\"name\":\"one\",\"namespace\":\"ns1\",\"uid\":\"u3\"},"
        "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
        "\"resourceNames\":[\"x\"],\"verbs\":[\"list\"]}]}");
    put(f, "rolebindings", "ns1",
        "{\"kind\":\"RoleBinding\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
        "\"metadata\":{\"name\":\"one\",\"namespace\":\"ns1\",\"uid\":\"u4\"},"
        "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\","
        "\"name\":\"one\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}");
    field_selector = "metadata.name=x";
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns1/configmaps", &bob, NULL), 200);
    field_selector = "metadata.name=y";
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns1/configmaps", &bob, NULL), 403);
    field_selector = "metadata.name!=x";
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns1/configmaps", &bob, NULL), 403);
    field_selector = NULL;
}

static void test_non_resource_masters_and_always_allow(void **state)
{
    fixture *f = *state;
    sk_user eve = {.name = "eve"};
    char *body = NULL;
    assert_int_equal(get(f->rbac, "/version", &eve, &body), 403);
    json_t *st = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "forbidden: User \"eve\" cannot get path \"/version\"");
    assert_null(json_object_get(st, "details"));
    json_decref(st);
    free(body);
    const char *masters[] = {"system:masters"};
    sk_user root = {.name = "root", .groups = masters, .n_groups = 1};
    assert_int_equal(get(f->rbac, "/version", &root, NULL), 200);
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/kube-system/secrets/s", &root, NULL), 404);
    assert_int_equal(get(f->always, "/api/v1/namespaces/kube-system/secrets/s", &eve, NULL), 404);
    /* A namespace is its own namespace in the attributes, as kube's RequestInfo has it. */
    assert_int_equal(get(f->rbac, "/api/v1/namespaces/ns9", &eve, &body), 403);
    assert_non_null(strstr(body, "in the namespace \\\"ns9\\\""));
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forbidden_until_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_resource_masters_and_always_allow,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

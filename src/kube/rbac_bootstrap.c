/*
 * rbac_bootstrap.c - see rbac_bootstrap.h. The embedded document is
 * parsed at first use (pthread_once) and never freed: it is read by the
 * bootstrap controller for the process's life.
 */
#include "kube/rbac_bootstrap.h"
#include "core/check.h"

#include <pthread.h>
#include <string.h>

extern const char sk_rbac_bootstrap_json[];
extern const size_t sk_rbac_bootstrap_json_len;

static json_t *policy;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    json_error_t err;
    policy = json_loadb(sk_rbac_bootstrap_json, sk_rbac_bootstrap_json_len, 0, &err);
    SK_CHECK(policy != NULL); /* generated and embedded at build time */
}

const json_t *sk_rbac_bootstrap_policy(void)
{
    pthread_once(&once, load);
    return policy;
}

int sk_rbac_bootstrap_autoupdate(const json_t *obj)
{
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"),
        "rbac.authorization.kubernetes.io/autoupdate"));
    return !v || strcmp(v, "false") != 0;
}

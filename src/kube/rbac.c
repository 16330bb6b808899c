/*
 * rbac.c - see rbac.h.
 *
 * The policy is plain JSON, indexed for the question a check asks ("which
 * bindings name this user or one of its groups, cluster-wide or in this
 * namespace"): {"clusterRoles": {name: role}, "roles": {ns: {name: role}},
 * "bindings": {scope: {subject key: [binding]}}}, scope "" for cluster role
 * bindings and the namespace for role bindings, subject key "u:<user>"
 * (service accounts as their user name, system:serviceaccount:<ns>:<name>)
 * or "g:<group>". So a check costs a few hash lookups per group of the
 * user, whatever the number of bindings (a walk over every binding of a
 * namespace cost 100 us at 100 bindings: each is a cache miss). Only what
 * evaluation reads is kept of each object (names, rules, role refs,
 * subjects): no managedFields or annotations. Jansson reads without
 * writing, so many threads may evaluate one policy at once as long as
 * nobody changes it: a change makes a new policy (sk_rbac_policy_with)
 * that shares every map the change does not touch with the old one.
 *
 * Matching is kube's (rbac/v1 helpers): "*" matches any verb, group,
 * resource or URL; a rule resource "*\/scale" matches the scale
 * subresource of anything; resourceNames, when present, restrict by name;
 * a non-resource URL rule ending in "*" matches by prefix.
 */
#include "kube/rbac.h"
#include "core/check.h"
#include "kube/scale.h"
#include "kube/selector.h"

#include <stdlib.h>
#include <string.h>

#define NZ(s) ((s) ? (s) : "")

json_t *sk_rbac_policy_new(void)
{
    json_t *p = json_pack("{s:{}, s:{}, s:{}}", "clusterRoles", "roles", "bindings");
    SK_CHECK_ALLOC(p);
    return p;
}

static const char *meta_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* o[key], created as an empty object or array. */
static json_t *slot(json_t *o, const char *key, int array)
{
    json_t *s = json_object_get(o, key);
    if (!s) {
        s = array ? json_array() : json_object();
        json_object_set_new(o, key, s);
    }
    return s;
}

/* The index key of subject s of a binding in namespace ns ("" for a
 * cluster binding) into b; 0 for a subject no user can match. */
static int subject_key(const json_t *s, const char *ns, sk_buf *b)
{
    const char *kind = json_string_value(json_object_get(s, "kind"));
    const char *name = json_string_value(json_object_get(s, "name"));
    if (!kind || !name)
        return 0;
    if (strcmp(kind, "User") == 0) {
        sk_buf_printf(b, "u:%s", name);
    } else if (strcmp(kind, "Group") == 0) {
        sk_buf_printf(b, "g:%s", name);
    } else if (strcmp(kind, "ServiceAccount") == 0) {
        const char *sa_ns = NZ(json_string_value(json_object_get(s, "namespace")));
        if (!*sa_ns)
            sa_ns = ns;
        if (!*sa_ns)
            return 0;
        sk_buf_printf(b, "u:system:serviceaccount:%s:%s", sa_ns, name);
    } else {
        return 0;
    }
    return 1;
}

/* What evaluation keeps of a binding. New reference. */
static json_t *slim_binding(const char *name, json_t *obj)
{
    json_t *subjects = json_object_get(obj, "subjects");
    json_t *slim =
        json_pack("{s:{s:s}, s:O, s:O}", "metadata", "name", name, "roleRef",
                  json_object_get(obj, "roleRef") ? json_object_get(obj, "roleRef") : json_null(),
                  "subjects", json_is_array(subjects) ? subjects : json_null());
    SK_CHECK_ALLOC(slim);
    return slim;
}

/* What evaluation keeps of a role. New reference. */
static json_t *slim_role(json_t *obj)
{
    json_t *rules = json_object_get(obj, "rules");
    json_t *slim = json_pack("{s:O}", "rules", json_is_array(rules) ? rules : json_null());
    SK_CHECK_ALLOC(slim);
    return slim;
}

/* Calls fn(key, arg) once for each distinct index key of obj's subjects
 * (a binding in namespace ns, "" for a cluster binding). */
static void each_subject_key(const json_t *obj, const char *ns,
                             void (*fn)(const char *key, void *arg), void *arg)
{
    json_t *seen = json_object();
    SK_CHECK_ALLOC(seen);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(obj, "subjects"), i, s)
    {
        sk_buf key = SK_BUF_INIT;
        if (subject_key(s, ns, &key) && !json_object_get(seen, key.data)) {
            json_object_set_new(seen, key.data, json_true());
            fn(key.data, arg);
        }
        sk_buf_free(&key);
    }
    json_decref(seen);
}

typedef struct binding_edit {
    json_t *scope; /* the scope's map, owned by the policy being made */
    json_t *slim;  /* the binding to add; NULL when removing */
    const char *name;
} binding_edit;

/* parent[key] (parent: a map this edit owns) replaced by a shallow copy of
 * it, or a new array or map, that the edit may change; returned. The
 * policy it came from still holds the original. */
static json_t *own(json_t *parent, const char *key, int array)
{
    json_t *old = json_object_get(parent, key);
    json_t *copy = old ? json_copy(old) : array ? json_array() : json_object();
    SK_CHECK_ALLOC(copy);
    json_object_set_new(parent, key, copy);
    return copy;
}

static const char *binding_name(const json_t *b)
{
    return NZ(json_string_value(json_object_get(json_object_get(b, "metadata"), "name")));
}

/* Puts e->slim into scope[key] in binding-name order: the order a build
 * from a key-ordered scan gives, so a policy edited binding by binding is
 * the policy built from scratch (the first binding that allows names the
 * reason). */
static void insert_binding(const char *key, void *arg)
{
    binding_edit *e = arg;
    json_t *list = own(e->scope, key, 1);
    size_t at = 0;
    while (at < json_array_size(list) &&
           strcmp(binding_name(json_array_get(list, at)), e->name) < 0)
        at++;
    json_array_insert(list, at, e->slim);
}

static void remove_binding(const char *key, void *arg)
{
    binding_edit *e = arg;
    if (!json_object_get(e->scope, key))
        return;
    json_t *list = own(e->scope, key, 1);
    for (size_t i = json_array_size(list); i-- > 0;)
        if (strcmp(binding_name(json_array_get(list, i)), e->name) == 0)
            json_array_remove(list, i);
    if (json_array_size(list) == 0)
        json_object_del(e->scope, key);
}

static void add_binding(json_t *policy, const char *ns, const char *name, json_t *obj)
{
    json_t *bindings = json_object_get(policy, "bindings");
    binding_edit e = {slot(bindings, ns, 0), slim_binding(name, obj), name};
    each_subject_key(obj, ns, insert_binding, &e);
    json_decref(e.slim);
    if (json_object_size(e.scope) == 0)
        json_object_del(bindings, ns);
}

void sk_rbac_policy_add(json_t *policy, const char *resource, json_t *obj)
{
    const char *name = meta_str(obj, "name"), *ns = NZ(meta_str(obj, "namespace"));
    if (!name)
        return;
    int cluster = strcmp(resource, "clusterroles") == 0;
    if (cluster || strcmp(resource, "roles") == 0) {
        json_t *where = cluster ? json_object_get(policy, "clusterRoles")
                                : slot(json_object_get(policy, "roles"), ns, 0);
        json_object_set_new(where, name, slim_role(obj));
    } else if (strcmp(resource, "clusterrolebindings") == 0) {
        add_binding(policy, "", name, obj);
    } else if (strcmp(resource, "rolebindings") == 0 && *ns) {
        add_binding(policy, ns, name, obj);
    }
}

json_t *sk_rbac_policy_with(const json_t *policy, const char *resource, json_t *old_obj,
                            json_t *new_obj)
{
    json_t *next = json_copy((json_t *)policy);
    SK_CHECK_ALLOC(next);
    const json_t *any = new_obj ? new_obj : old_obj;
    const char *name = any ? meta_str(any, "name") : NULL;
    const char *ns = any ? NZ(meta_str(any, "namespace")) : "";
    int cluster_binding = strcmp(resource, "clusterrolebindings") == 0;
    if (!name) {
        /* nothing is indexed under no name */
    } else if (strcmp(resource, "clusterroles") == 0) {
        json_t *roles = own(next, "clusterRoles", 0);
        if (new_obj)
            json_object_set_new(roles, name, slim_role(new_obj));
        else
            json_object_del(roles, name);
    } else if (strcmp(resource, "roles") == 0) {
        json_t *by_ns = own(next, "roles", 0);
        json_t *roles = own(by_ns, ns, 0);
        if (new_obj)
            json_object_set_new(roles, name, slim_role(new_obj));
        else
            json_object_del(roles, name);
        if (json_object_size(roles) == 0)
            json_object_del(by_ns, ns);
    } else if (cluster_binding || (strcmp(resource, "rolebindings") == 0 && *ns)) {
        const char *scope_key = cluster_binding ? "" : ns;
        json_t *bindings = own(next, "bindings", 0);
        binding_edit e = {own(bindings, scope_key, 0), NULL, name};
        if (old_obj)
            each_subject_key(old_obj, scope_key, remove_binding, &e);
        if (new_obj) {
            e.slim = slim_binding(name, new_obj);
            each_subject_key(new_obj, scope_key, insert_binding, &e);
            json_decref(e.slim);
        }
        if (json_object_size(e.scope) == 0)
            json_object_del(bindings, scope_key);
    }
    return next;
}

/* ---- rule matching ---- */

int sk_rbac_list_has(const json_t *list, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *e = json_string_value(v);
        if (e && strcmp(e, s) == 0)
            return 1;
    }
    return 0;
}

static int has_or_star(const json_t *list, const char *s)
{
    return sk_rbac_list_has(list, "*") || sk_rbac_list_has(list, s);
}

static int resource_matches(const json_t *rule, const char *resource, const char *sub)
{
    const json_t *list = json_object_get(rule, "resources");
    size_t i, sub_len = strlen(sub);
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *r = json_string_value(v);
        if (!r)
            continue;
        if (strcmp(r, "*") == 0)
            return 1;
        size_t rl = strlen(resource);
        if (sub_len == 0) {
            if (strcmp(r, resource) == 0)
                return 1;
            continue;
        }
        if (strncmp(r, resource, rl) == 0 && r[rl] == '/' && strcmp(r + rl + 1, sub) == 0)
            return 1;
        if (strncmp(r, "*/", 2) == 0 && strcmp(r + 2, sub) == 0)
            return 1;
    }
    return 0;
}

static int url_matches(const json_t *rule, const char *path)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(rule, "nonResourceURLs"), i, v)
    {
        const char *u = json_string_value(v);
        if (!u)
            continue;
        size_t n = strlen(u);
        if (strcmp(u, "*") == 0 || strcmp(u, path) == 0)
            return 1;
        if (n > 0 && u[n - 1] == '*' && strncmp(u, path, n - 1) == 0)
            return 1;
    }
    return 0;
}

static int rule_allows(const sk_rbac_attrs *a, const json_t *rule)
{
    if (!has_or_star(json_object_get(rule, "verbs"), NZ(a->verb)))
        return 0;
    if (!a->resource_request)
        return url_matches(rule, NZ(a->path));
    const json_t *names = json_object_get(rule, "resourceNames");
    return has_or_star(json_object_get(rule, "apiGroups"), NZ(a->group)) &&
           resource_matches(rule, NZ(a->resource), NZ(a->subresource)) &&
           (json_array_size(names) == 0 || sk_rbac_list_has(names, NZ(a->name)));
}

/* ---- subjects and bindings ---- */

static int in_groups(const sk_user *u, const char *g)
{
    for (size_t i = 0; i < u->n_groups; i++)
        if (u->groups[i] && strcmp(u->groups[i], g) == 0)
            return 1;
    return 0;
}

/* Whether subject s of a binding in namespace binding_ns ("" for a
 * cluster role binding) names user u. */
static int subject_applies(const json_t *s, const sk_user *u, const char *binding_ns)
{
    const char *kind = NZ(json_string_value(json_object_get(s, "kind")));
    const char *name = NZ(json_string_value(json_object_get(s, "name")));
    const char *user = NZ(u->name);
    if (strcmp(kind, "User") == 0)
        return strcmp(user, name) == 0;
    if (strcmp(kind, "Group") == 0)
        return in_groups(u, name);
    if (strcmp(kind, "ServiceAccount") == 0) {
        const char *ns = NZ(json_string_value(json_object_get(s, "namespace")));
        if (!*ns)
            ns = binding_ns;
        static const char prefix[] = "system:serviceaccount:";
        size_t pl = sizeof prefix - 1, nl = strlen(ns);
        return *ns && strncmp(user, prefix, pl) == 0 && strncmp(user + pl, ns, nl) == 0 &&
               user[pl + nl] == ':' && strcmp(user + pl + nl + 1, name) == 0;
    }
    return 0;
}

/* kube's description of a subject in a reason. */
static void describe_subject(sk_buf *b, const json_t *s, const char *binding_ns)
{
    const char *kind = NZ(json_string_value(json_object_get(s, "kind")));
    const char *name = NZ(json_string_value(json_object_get(s, "name")));
    sk_buf_printf(b, "%s ", kind);
    if (strcmp(kind, "ServiceAccount") != 0) {
        sk_buf_go_quoted(b, name);
        return;
    }
    const char *ns = NZ(json_string_value(json_object_get(s, "namespace")));
    sk_buf tmp = SK_BUF_INIT;
    sk_buf_printf(&tmp, "%s/%s", name, *ns ? ns : binding_ns);
    sk_buf_go_quoted(b, tmp.data);
    sk_buf_free(&tmp);
}

/* Called for each binding that applies to the user with its role's rules
 * (NULL when the role is missing); returns non-zero to stop. */
typedef struct visit {
    const json_t *policy;
    const sk_user *user;
    int (*fn)(struct visit *v, const json_t *binding, const json_t *subject, const char *ns,
              const json_t *rules);
    sk_buf errors; /* "; "-free list of missing roles, kube's aggregate form */
    int n_errors;
    void *arg;
} visit;

static void note_missing(visit *v, const char *kind, const char *name)
{
    sk_buf_puts(&v->errors, v->n_errors++ ? ", " : "");
    sk_buf_printf(&v->errors, "%s.rbac.authorization.k8s.io ", kind);
    sk_buf_go_quoted(&v->errors, name);
    sk_buf_puts(&v->errors, " not found");
}

/* The role a roleRef of kind and name names from a binding in ns ("" for
 * a cluster binding, which cannot name a Role); NULL when missing. */
static const json_t *find_role(const json_t *policy, const char *kind, const char *ns,
                               const char *name)
{
    if (strcmp(kind, "ClusterRole") == 0)
        return json_object_get(json_object_get(policy, "clusterRoles"), name);
    if (strcmp(kind, "Role") == 0 && *ns)
        return json_object_get(json_object_get(json_object_get(policy, "roles"), ns), name);
    return NULL;
}

const json_t *sk_rbac_role_rules(const json_t *policy, const char *kind, const char *ns,
                                 const char *name)
{
    const json_t *role = find_role(policy, NZ(kind), NZ(ns), NZ(name));
    const json_t *rules = role ? json_object_get(role, "rules") : NULL;
    return rules ? rules : (role ? json_null() : NULL);
}

/* Visits binding (in namespace ns, "" for cluster bindings). */
static int visit_binding(visit *v, const json_t *binding, const char *ns)
{
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(binding, "subjects"), i, s)
    {
        if (!subject_applies(s, v->user, ns))
            continue;
        const json_t *ref = json_object_get(binding, "roleRef");
        const char *kind = NZ(json_string_value(json_object_get(ref, "kind")));
        const char *name = NZ(json_string_value(json_object_get(ref, "name")));
        const json_t *role = find_role(v->policy, kind, ns, name);
        if (!role)
            note_missing(v, strcmp(kind, "Role") == 0 ? "role" : "clusterrole", name);
        return v->fn(v, binding, s, ns, role ? json_object_get(role, "rules") : NULL);
    }
    return 0;
}

/* Visits each binding of scope that names the user or one of its groups,
 * once (a binding may name both); returns non-zero if v->fn stopped. */
static int visit_scope(visit *v, const char *scope)
{
    const json_t *index = json_object_get(json_object_get(v->policy, "bindings"), scope);
    if (!index)
        return 0;
    const json_t **seen = NULL;
    size_t n_seen = 0, cap = 0;
    int stop = 0;
    for (size_t k = 0; !stop && k <= v->user->n_groups; k++) {
        sk_buf key = SK_BUF_INIT;
        if (k == 0)
            sk_buf_printf(&key, "u:%s", NZ(v->user->name));
        else
            sk_buf_printf(&key, "g:%s", NZ(v->user->groups[k - 1]));
        size_t i;
        const json_t *b;
        json_array_foreach(json_object_get(index, key.data), i, b)
        {
            size_t j = 0;
            while (j < n_seen && seen[j] != b)
                j++;
            if (j < n_seen)
                continue;
            if (n_seen == cap) {
                cap = cap ? 2 * cap : 16;
                seen = realloc(seen, cap * sizeof *seen);
                SK_CHECK_ALLOC(seen);
            }
            seen[n_seen++] = b;
            if ((stop = visit_binding(v, b, scope)))
                break;
        }
        sk_buf_free(&key);
    }
    free(seen);
    return stop;
}

static void visit_rules(visit *v, const char *ns)
{
    if (!visit_scope(v, "") && ns && *ns)
        visit_scope(v, ns);
}

/* ---- authorize ---- */

typedef struct decide {
    const sk_rbac_attrs *a;
    sk_buf reason;
    int allowed;
} decide;

static int decide_one(visit *v, const json_t *binding, const json_t *subject, const char *ns,
                      const json_t *rules)
{
    decide *d = v->arg;
    size_t i;
    const json_t *rule;
    json_array_foreach(rules, i, rule)
    {
        if (!rule_allows(d->a, rule))
            continue;
        const json_t *ref = json_object_get(binding, "roleRef");
        const char *name = NZ(meta_str(binding, "name"));
        sk_buf_puts(&d->reason, *ns ? "RBAC: allowed by RoleBinding " : "RBAC: allowed by ClusterRoleBinding ");
        if (*ns) {
            sk_buf tmp = SK_BUF_INIT;
            sk_buf_printf(&tmp, "%s/%s", name, ns);
            sk_buf_go_quoted(&d->reason, tmp.data);
            sk_buf_free(&tmp);
        } else {
            sk_buf_go_quoted(&d->reason, name);
        }
        sk_buf_printf(&d->reason, " of %s ", NZ(json_string_value(json_object_get(ref, "kind"))));
        sk_buf_go_quoted(&d->reason, NZ(json_string_value(json_object_get(ref, "name"))));
        sk_buf_puts(&d->reason, " to ");
        describe_subject(&d->reason, subject, ns);
        d->allowed = 1;
        return 1;
    }
    return 0;
}

static char *str_or_empty(sk_buf *b)
{
    char *s = b->data ? sk_buf_steal(b, NULL) : strdup("");
    SK_CHECK_ALLOC(s);
    return s;
}

void sk_rbac_authorize(const json_t *policy, const sk_rbac_attrs *a, sk_rbac_decision *out)
{
    decide d = {.a = a, .reason = SK_BUF_INIT};
    visit v = {.policy = policy, .user = a->user, .fn = decide_one, .errors = SK_BUF_INIT, .arg = &d};
    if (in_groups(a->user, "system:masters")) {
        d.allowed = 1;
    } else {
        visit_rules(&v, a->resource_request ? NZ(a->ns) : "");
        if (!d.allowed && v.n_errors) {
            sk_buf_puts(&d.reason, v.n_errors > 1 ? "RBAC: [" : "RBAC: ");
            sk_buf_append(&d.reason, v.errors.data, v.errors.len);
            sk_buf_puts(&d.reason, v.n_errors > 1 ? "]" : "");
        }
    }
    out->allowed = d.allowed;
    out->reason = str_or_empty(&d.reason);
    sk_buf_free(&v.errors);
}

void sk_rbac_decision_clear(sk_rbac_decision *d)
{
    free(d->reason);
    d->reason = NULL;
}

void sk_rbac_forbidden_text(const sk_rbac_attrs *a, sk_buf *out)
{
    sk_buf_puts(out, "User ");
    sk_buf_go_quoted(out, a->user ? NZ(a->user->name) : "");
    sk_buf_printf(out, " cannot %s ", NZ(a->verb));
    if (!a->resource_request) {
        sk_buf_puts(out, "path ");
        sk_buf_go_quoted(out, NZ(a->path));
        return;
    }
    sk_buf res = SK_BUF_INIT;
    sk_buf_puts(&res, NZ(a->resource));
    if (a->subresource && *a->subresource)
        sk_buf_printf(&res, "/%s", a->subresource);
    sk_buf_puts(out, "resource ");
    sk_buf_go_quoted(out, res.data);
    sk_buf_free(&res);
    sk_buf_puts(out, " in API group ");
    sk_buf_go_quoted(out, NZ(a->group));
    if (a->ns && *a->ns) {
        sk_buf_puts(out, " in the namespace ");
        sk_buf_go_quoted(out, a->ns);
    } else {
        sk_buf_puts(out, " at the cluster scope");
    }
}

/* ---- rules review ---- */

/* A copy of the listed fields of rule that are present. */
static json_t *pick(const json_t *rule, const char *const *keys)
{
    json_t *o = json_object();
    for (; *keys; keys++) {
        json_t *v = json_object_get(rule, *keys);
        if (json_array_size(v) > 0)
            json_object_set(o, *keys, v);
    }
    return o;
}

static int collect_one(visit *v, const json_t *binding, const json_t *subject, const char *ns,
                       const json_t *rules)
{
    static const char *const res_keys[] = {"verbs", "apiGroups", "resources", "resourceNames",
                                           NULL};
    static const char *const url_keys[] = {"verbs", "nonResourceURLs", NULL};
    json_t *status = v->arg;
    size_t i;
    const json_t *rule;
    json_array_foreach(rules, i, rule)
    {
        json_t *r = json_array_size(json_object_get(rule, "nonResourceURLs")) > 0
                        ? pick(rule, url_keys)
                        : pick(rule, res_keys);
        if (!json_object_get(r, "verbs"))
            json_object_set_new(r, "verbs", json_array());
        const char *key =
            json_object_get(r, "nonResourceURLs") ? "nonResourceRules" : "resourceRules";
        json_array_append_new(json_object_get(status, key), r);
    }
    return 0;
}

json_t *sk_rbac_rules_review(const json_t *policy, const sk_user *user, const char *ns)
{
    json_t *status = json_pack("{s:[], s:[], s:b}", "resourceRules", "nonResourceRules",
                               "incomplete", 0);
    SK_CHECK_ALLOC(status);
    visit v = {.policy = policy, .user = user, .fn = collect_one, .errors = SK_BUF_INIT,
               .arg = status};
    visit_rules(&v, ns);
    if (v.n_errors) {
        json_object_set_new(status, "incomplete", json_true());
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, v.n_errors > 1 ? "[%s]" : "%s", v.errors.data);
        json_object_set_new(status, "evaluationError", json_string(msg.data));
        sk_buf_free(&msg);
    }
    sk_buf_free(&v.errors);
    return status;
}

/* ---- the rules a user holds ---- */

static int append_rules(visit *v, const json_t *binding, const json_t *subject, const char *ns,
                        const json_t *rules)
{
    (void)binding, (void)subject, (void)ns;
    json_array_extend(v->arg, (json_t *)(json_is_array(rules) ? rules : NULL));
    return 0;
}

json_t *sk_rbac_rules_for(const json_t *policy, const sk_user *user, const char *ns,
                          char **errors)
{
    json_t *rules = json_array();
    SK_CHECK_ALLOC(rules);
    visit v = {.policy = policy, .user = user, .fn = append_rules, .errors = SK_BUF_INIT,
               .arg = rules};
    visit_rules(&v, ns);
    *errors = NULL;
    if (v.n_errors) {
        sk_buf msg = SK_BUF_INIT;
        sk_buf_printf(&msg, v.n_errors > 1 ? "[%s]" : "%s", v.errors.data);
        *errors = sk_buf_steal(&msg, NULL);
    }
    sk_buf_free(&v.errors);
    return rules;
}

/* ---- aggregation ---- */

static int selector_matches(const json_t *sel, const json_t *labels)
{
    char *s = sk_scale_selector_string(sel, 0);
    sk_label_selector *ls = NULL;
    char *err = NULL;
    int ok = 0;
    if (sk_label_selector_parse(s, &ls, &err) == SK_OK) {
        /* An empty selector selects nothing here, as in kube's controller. */
        ok = !sk_label_selector_is_empty(ls) && sk_label_selector_matches(ls, labels);
        sk_label_selector_free(ls);
    }
    free(err);
    free(s);
    return ok;
}

static int has_rule(const json_t *rules, const json_t *rule)
{
    size_t i;
    const json_t *r;
    json_array_foreach(rules, i, r)
    {
        if (json_equal((json_t *)r, (json_t *)rule))
            return 1;
    }
    return 0;
}

json_t *sk_rbac_aggregate(const json_t *role, const json_t *roles)
{
    json_t *out = json_array();
    SK_CHECK_ALLOC(out);
    const char *self = NZ(meta_str(role, "name"));
    const json_t *sels =
        json_object_get(json_object_get(role, "aggregationRule"), "clusterRoleSelectors");
    size_t i, j, k;
    const json_t *sel, *other, *rule;
    json_array_foreach(sels, i, sel)
    {
        json_array_foreach(roles, j, other)
        {
            if (strcmp(NZ(meta_str(other, "name")), self) == 0 ||
                !selector_matches(sel, json_object_get(json_object_get(other, "metadata"),
                                                       "labels")))
                continue;
            json_array_foreach(json_object_get(other, "rules"), k, rule)
            {
                if (!has_rule(out, rule))
                    json_array_append(out, (json_t *)rule);
            }
        }
    }
    return out;
}

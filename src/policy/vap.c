/*
 * vap.c - see vap.h. The steps follow kube's policy dispatcher
 * (admission/plugin/policy/validating/dispatcher.go) and validator
 * (validator.go):
 *
 * - a policy is looked at only when its matchConstraints match the request
 *   (generic/policy_matcher.go: namespaceSelector, objectSelector,
 *   excludeResourceRules, resourceRules, matchPolicy Equivalent), then each
 *   of its bindings whose matchResources (none: everything) match;
 * - a binding brings its params (paramRef by name or selector, namespace
 *   defaulting to the request's); none found is a configuration error
 *   under parameterNotFoundAction Deny, and evaluates nothing under Allow;
 * - per param, matchConditions first (false: the binding is skipped; an
 *   error: failurePolicy), then each validation under one cost budget
 *   (celconfig.RuntimeCELCostBudget, one step of ours for one unit),
 *   variables evaluated when first used and kept for the other
 *   expressions of that evaluation;
 * - a validation that is not true, or that fails under failurePolicy Fail,
 *   is a failure the binding's validationActions act on: Deny refuses the
 *   request (the first refusal in order answers it, after every policy
 *   ran, so warnings and audit annotations are all recorded), Warn adds
 *   kube's Warning, Audit kube's validation_failure annotation;
 * - a configuration error (a selector that does not parse, missing params)
 *   refuses the request under Fail and is ignored under Ignore.
 *
 * The expressions are compiled as kube compiles stored ones
 * (cel/admission.h: types checked, in the stored environment), so one
 * stored without the check made when a policy is written (through the
 * etcd face) that kube would not compile is kube's compilation error when
 * evaluated, which failurePolicy then decides.
 */
#include "policy/vap.h"
#include "cel/admission.h"
#include "cel/eval.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "kube/status.h"
#include "policy/conditions.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* celconfig.RuntimeCELCostBudget, for the validations of one evaluation and
 * again for its audit annotations */
#define RUNTIME_BUDGET 10000000
/* celconfig.MaxEvaluatedMessageExpressionSizeBytes */
#define MAX_MESSAGE 5120
/* dispatcher.go's maxAuditAnnotationValueLength */
#define MAX_AUDIT_VALUE (10 * 1024)

/* what an expression that does not compile is when evaluated (cel
 * filter's), before the compiler's "compilation failed: ..." */
#define COMPILATION_ERROR "compilation error: "

static const char *const budget_spent = "validation failed due to running out of cost budget, "
                                        "no further validation rules will be run";

/* One expression: its tree, or the error it is when evaluated (kube's
 * "compilation error: ..."). */
typedef struct expr {
    const char *text;
    const sk_cel_expr *tree;
    const char *error;
} expr;

typedef struct variable {
    const char *name;
    expr e;
} variable;

typedef struct validation {
    expr e;
    expr message_e; /* text NULL: none */
    const char *message;
    const char *reason; /* NULL: Invalid */
} validation;

typedef struct annotation {
    const char *key;
    expr e;
} annotation;

/* matchConstraints or matchResources, compiled. */
typedef struct criteria {
    const json_t *json; /* NULL: everything */
    sk_label_selector *ns_sel, *obj_sel;
    char *error; /* a selector that does not parse (new) */
} criteria;

typedef struct policy {
    const char *name;
    int ignore; /* failurePolicy Ignore */
    criteria match;
    const char *param_version, *param_kind; /* NULL: no paramKind */
    sk_conditions *conds;
    variable *vars;
    size_t n_vars;
    validation *vals;
    size_t n_vals;
    annotation *anns;
    size_t n_anns;
} policy;

typedef struct binding {
    const char *name;
    const policy *p;
    criteria match;
    const json_t *actions;
    int deny, warn, audit;
    const json_t *param_ref; /* NULL: none */
    sk_label_selector *param_sel;
    char *param_sel_error;
} binding;

struct sk_vap_set {
    atomic_int refs;
    json_t *policies, *bindings;
    sk_arena *arena; /* the compiled expressions */
    policy *pols;
    size_t n_pols;
    binding *binds; /* grouped by policy, in the policies' order */
    size_t n_binds;
};

static const char *str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(obj, field));
}

/* text compiled by adm as kube compiles a stored expression (the stored
 * environment), decl's variables declared, held to result; variable: the
 * name it composes (NULL for none). */
static void compile_expr(sk_arena *a, sk_cel_adm *adm, const char *text, unsigned decl,
                         sk_cel_adm_result result, const char *variable, expr *out)
{
    sk_buf detail = SK_BUF_INIT;
    out->text = sk_arena_strdup(a, text ? text : "");
    out->tree = sk_cel_adm_compile(adm, out->text, decl, 1, result, variable, &detail);
    out->error = NULL;
    if (!out->tree) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, COMPILATION_ERROR "%s", detail.data ? detail.data : "");
        out->error = sk_arena_strdup(a, m.data);
        sk_buf_free(&m);
    }
    sk_buf_free(&detail);
}

static void compile_selector(const json_t *sel, sk_label_selector **out, char **error)
{
    char *msg = NULL;
    if (*error == NULL && sk_webhook_selector_compile(sel, out, &msg) != SK_OK) {
        *out = NULL;
        *error = msg ? msg : strdup("invalid selector");
    }
}

static void compile_criteria(const json_t *json, criteria *c)
{
    c->json = json;
    if (!json)
        return;
    compile_selector(json_object_get(json, "namespaceSelector"), &c->ns_sel, &c->error);
    compile_selector(json_object_get(json, "objectSelector"), &c->obj_sel, &c->error);
}

static void free_criteria(criteria *c)
{
    sk_label_selector_free(c->ns_sel);
    sk_label_selector_free(c->obj_sel);
    free(c->error);
}

static void compile_policy(sk_arena *a, const json_t *obj, policy *p)
{
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *pk = json_object_get(spec, "paramKind");
    const char *name = str(json_object_get(obj, "metadata"), "name");
    const json_t *vars = json_object_get(spec, "variables");
    /* what kube declares for a policy's expressions (its compiler composes
     * the variables when there are some): matchConditions see no
     * variables, messageExpressions no authorizer */
    unsigned decl = SK_CEL_ADM_AUTHORIZER | (pk ? SK_CEL_ADM_PARAMS : 0) |
                    (json_array_size(vars) ? SK_CEL_ADM_VARIABLES : 0);
    sk_cel_adm *adm = sk_cel_adm_new(a);
    p->name = name ? name : "";
    p->ignore = str(spec, "failurePolicy") && strcmp(str(spec, "failurePolicy"), "Ignore") == 0;
    compile_criteria(json_object_get(spec, "matchConstraints"), &p->match);
    if (pk) {
        p->param_version = str(pk, "apiVersion") ? str(pk, "apiVersion") : "";
        p->param_kind = str(pk, "kind") ? str(pk, "kind") : "";
    }
    p->conds =
        sk_conditions_new(json_object_get(spec, "matchConditions"), pk ? SK_CEL_ADM_PARAMS : 0);
    const json_t *vals = json_object_get(spec, "validations");
    const json_t *anns = json_object_get(spec, "auditAnnotations");
    p->n_vars = json_array_size(vars);
    p->n_vals = json_array_size(vals);
    p->n_anns = json_array_size(anns);
    p->vars = sk_arena_alloc(a, (p->n_vars + 1) * sizeof *p->vars);
    p->vals = sk_arena_alloc(a, (p->n_vals + 1) * sizeof *p->vals);
    p->anns = sk_arena_alloc(a, (p->n_anns + 1) * sizeof *p->anns);
    for (size_t i = 0; i < p->n_vars; i++) {
        const json_t *v = json_array_get(vars, i);
        p->vars[i].name = sk_arena_strdup(a, str(v, "name") ? str(v, "name") : "");
        compile_expr(a, adm, str(v, "expression"), decl, SK_CEL_ADM_ANY, p->vars[i].name,
                     &p->vars[i].e);
    }
    for (size_t i = 0; i < p->n_vals; i++) {
        const json_t *v = json_array_get(vals, i);
        validation *k = &p->vals[i];
        compile_expr(a, adm, str(v, "expression"), decl, SK_CEL_ADM_BOOL, NULL, &k->e);
        memset(&k->message_e, 0, sizeof k->message_e);
        if (str(v, "messageExpression") && *str(v, "messageExpression"))
            compile_expr(a, adm, str(v, "messageExpression"), decl & ~SK_CEL_ADM_AUTHORIZER,
                         SK_CEL_ADM_STRING, NULL, &k->message_e);
        k->message = str(v, "message") ? sk_arena_strdup(a, str(v, "message")) : NULL;
        k->reason = str(v, "reason") ? sk_arena_strdup(a, str(v, "reason")) : NULL;
    }
    for (size_t i = 0; i < p->n_anns; i++) {
        const json_t *v = json_array_get(anns, i);
        p->anns[i].key = sk_arena_strdup(a, str(v, "key") ? str(v, "key") : "");
        compile_expr(a, adm, str(v, "valueExpression"), decl, SK_CEL_ADM_STRING_OR_NULL, NULL,
                     &p->anns[i].e);
    }
}

static int has_action(const json_t *actions, const char *want)
{
    size_t i;
    json_t *v;
    json_array_foreach(actions, i, v) if (json_is_string(v) &&
                                          strcmp(json_string_value(v), want) == 0) return 1;
    return 0;
}

static void compile_binding(const json_t *obj, const policy *p, binding *b)
{
    const json_t *spec = json_object_get(obj, "spec");
    const char *name = str(json_object_get(obj, "metadata"), "name");
    b->name = name ? name : "";
    b->p = p;
    compile_criteria(json_object_get(spec, "matchResources"), &b->match);
    b->actions = json_object_get(spec, "validationActions");
    b->deny = has_action(b->actions, "Deny");
    b->warn = has_action(b->actions, "Warn");
    b->audit = has_action(b->actions, "Audit");
    b->param_ref = json_object_get(spec, "paramRef");
    const json_t *sel = json_object_get(b->param_ref, "selector");
    if (b->param_ref && !str(b->param_ref, "name") && sel)
        compile_selector(sel, &b->param_sel, &b->param_sel_error);
}

sk_vap_set *sk_vap_set_new(json_t *policies, json_t *bindings)
{
    sk_vap_set *s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    atomic_init(&s->refs, 1);
    s->policies = json_incref(policies);
    s->bindings = json_incref(bindings);
    s->arena = sk_arena_new();
    size_t np = json_array_size(policies), nb = json_array_size(bindings);
    s->pols = calloc(np ? np : 1, sizeof *s->pols);
    s->binds = calloc(nb ? nb : 1, sizeof *s->binds);
    SK_CHECK_ALLOC(s->pols);
    SK_CHECK_ALLOC(s->binds);
    for (size_t i = 0; i < np; i++)
        compile_policy(s->arena, json_array_get(policies, i), &s->pols[s->n_pols++]);
    /* each policy's bindings after one another, in name order: kube's
     * order of evaluation */
    for (size_t i = 0; i < s->n_pols; i++) {
        for (size_t j = 0; j < nb; j++) {
            const json_t *b = json_array_get(bindings, j);
            const char *pn = str(json_object_get(b, "spec"), "policyName");
            if (pn && strcmp(pn, s->pols[i].name) == 0)
                compile_binding(b, &s->pols[i], &s->binds[s->n_binds++]);
        }
    }
    return s;
}

sk_vap_set *sk_vap_set_ref(sk_vap_set *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

void sk_vap_set_unref(sk_vap_set *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (size_t i = 0; i < s->n_pols; i++) {
        free_criteria(&s->pols[i].match);
        sk_conditions_free(s->pols[i].conds);
    }
    for (size_t i = 0; i < s->n_binds; i++) {
        free_criteria(&s->binds[i].match);
        sk_label_selector_free(s->binds[i].param_sel);
        free(s->binds[i].param_sel_error);
    }
    free(s->pols);
    free(s->binds);
    sk_arena_free(s->arena);
    json_decref(s->policies);
    json_decref(s->bindings);
    free(s);
}

static int exact(const json_t *match)
{
    const char *mp = str(match, "matchPolicy");
    return mp && strcmp(mp, "Exact") == 0;
}

/* resourceRules (or, exclude, excludeResourceRules) of match cover a: a's
 * own resource (*eq NULL), or under matchPolicy Equivalent one sharing its
 * storage (*eq that one; eq may be NULL). */
static int rules_cover(const json_t *match, int exclude, const sk_webhook_attrs *a,
                       const char *name, const sk_resource **eq)
{
    const json_t *rules =
        json_object_get(match, exclude ? "excludeResourceRules" : "resourceRules");
    const sk_resource *e = NULL;
    int hit = sk_webhook_rule_list_match(rules, a, name) ||
              (!exact(match) && (e = sk_webhook_rule_list_equivalent(rules, a, name)) != NULL);
    if (eq)
        *eq = e;
    return hit;
}

int sk_vap_set_any(const sk_vap_set *s)
{
    return s && s->n_binds > 0;
}

int sk_vap_set_covers(const sk_vap_set *s, const sk_webhook_attrs *a, const char *name)
{
    if (s->n_binds == 0 || sk_webhook_exempt(a))
        return 0;
    for (size_t i = 0; i < s->n_binds; i++)
        if (rules_cover(s->binds[i].p->match.json, 0, a, name, NULL))
            return 1;
    return 0;
}

/* What one call of sk_vap_validate keeps. */
typedef struct state {
    const sk_vap_request *rq;
    json_t *warnings, *annotations;
    int ns_read;      /* 0 not yet, 1 read, -1 missing */
    const json_t *ns; /* the request's Namespace, once read */
    json_t *denial;   /* the first refusal's Status */
} state;

/* The request's Namespace (NULL: none or missing). */
static const json_t *namespace_of(state *st)
{
    const sk_webhook_attrs *a = &st->rq->a;
    if (st->ns_read == 0) {
        st->ns_read = -1;
        if (*a->ns && st->rq->ns_object && st->rq->ns_object(st->rq->ns_arg, a->ns, &st->ns) == 0)
            st->ns_read = 1;
    }
    return st->ns_read > 0 ? st->ns : NULL;
}

/* Matcher.Matches, in its order: a selector that does not match skips
 * even when the namespace could not be read; that error (*err, new) is
 * returned (-1) only for a request the rest matches. 1 (*eq: NULL, or the
 * equivalent resource the rules cover) or 0 otherwise. */
static int criteria_match(state *st, const criteria *c, const sk_resource **eq, char **err)
{
    const sk_webhook_attrs *a = &st->rq->a;
    *eq = NULL;
    if (!c->json)
        return 1;
    if (c->error) {
        *err = strdup(c->error);
        return -1;
    }
    int ns_missing = 0;
    if (sk_webhook_ns_selector_applies(a) && c->ns_sel) {
        const json_t *labels = NULL;
        if (sk_webhook_ns_labels_from_object(a)) {
            labels = json_object_get(json_object_get(a->object, "metadata"), "labels");
        } else {
            const json_t *ns = namespace_of(st);
            ns_missing = !ns;
            labels = json_object_get(json_object_get(ns, "metadata"), "labels");
        }
        if (!ns_missing && !sk_label_selector_matches(c->ns_sel, labels))
            return 0;
    }
    if (!sk_webhook_object_selected(c->obj_sel, a) ||
        rules_cover(c->json, 1, a, st->rq->name, NULL))
        return 0;
    if (json_array_size(json_object_get(c->json, "resourceRules")) > 0 &&
        !rules_cover(c->json, 0, a, st->rq->name, eq))
        return 0;
    if (ns_missing) {
        /* the Namespace lister's NotFound */
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, "namespaces \"%s\" not found", a->ns);
        *err = sk_buf_steal(&m, NULL);
        return -1;
    }
    return 1;
}

static const char *reason_of(const char *reason)
{
    return reason ? reason : "Invalid";
}

/* kube's reasonToCode */
static int code_of(const char *reason)
{
    return strcmp(reason, "Forbidden") == 0               ? 403
           : strcmp(reason, "Unauthorized") == 0          ? 401
           : strcmp(reason, "RequestEntityTooLarge") == 0 ? 413
                                                          : 422;
}

/* A refusal by p with binding b (NULL for the policy's own) for msg: the
 * first one answers the request. */
static void deny(state *st, const policy *p, const binding *b, const char *msg, const char *reason)
{
    if (st->denial)
        return;
    const sk_webhook_attrs *a = &st->rq->a;
    sk_buf m = SK_BUF_INIT;
    if (b)
        sk_buf_printf(&m, "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s",
                      p->name, b->name, msg);
    else
        sk_buf_printf(&m, "ValidatingAdmissionPolicy '%s' denied request: %s", p->name, msg);
    json_t *s = sk_status_forbidden(a->group, a->resource, st->rq->name, m.data);
    reason = reason_of(reason);
    json_object_set_new(s, "reason", json_string(reason));
    json_object_set_new(s, "code", json_integer(code_of(reason)));
    json_t *details = json_object_get(s, "details");
    json_t *causes = json_object_get(details, "causes");
    if (!causes) {
        causes = json_array();
        json_object_set_new(details, "causes", causes);
    }
    json_array_append_new(causes, json_pack("{s:s}", "message", m.data));
    st->denial = s;
    sk_buf_free(&m);
}

/* addConfigError: under Fail a refusal, under Ignore nothing. */
static void config_error(state *st, const policy *p, const binding *b, const char *why)
{
    if (p->ignore) {
        sk_log_info("admission policy %s: ignoring a configuration error: %s", p->name, why);
        return;
    }
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "failed to configure %s: %s", b ? "binding" : "policy", why);
    deny(st, p, b, m.data, NULL);
    sk_buf_free(&m);
}

static void annotate(json_t *ann, const char *key, const char *value)
{
    char *msg = NULL;
    if (sk_webhook_annotate(ann, key, value, &msg) != SK_OK)
        sk_log_warn("admission policy: failed to set admission audit annotation %s to %s: %s", key,
                    value, msg);
    free(msg);
}

/* A validation failure (or an error failing closed) that b's
 * validationActions act on. */
static void act(state *st, const policy *p, const binding *b, size_t index, const char *msg,
                const char *reason)
{
    if (b->deny)
        deny(st, p, b, msg, reason);
    if (b->warn) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m,
                      "Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s",
                      p->name, b->name, msg);
        json_array_append_new(st->warnings, json_string(m.data));
        sk_buf_free(&m);
    }
    if (b->audit) {
        /* ValidationFailureValue, in Go's field order */
        json_t *v = json_pack("[{s:s, s:s, s:s, s:I, s:O}]", "message", msg, "policy", p->name,
                              "binding", b->name, "expressionIndex", (json_int_t)index,
                              "validationActions", b->actions);
        char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        SK_CHECK_ALLOC(text);
        annotate(st->annotations, "validation.policy.admission.k8s.io/validation_failure", text);
        free(text);
        json_decref(v);
    }
}

static const sk_cel_val *from_json(sk_arena *a, const json_t *j)
{
    return j ? sk_cel_from_json(a, j) : sk_cel_null();
}

/* The request as a policy sees it (sk_vap_versioned_fn's), made when a
 * binding of the policy first needs it. */
typedef struct view {
    const sk_resource *eq;
    int made; /* 1 made, -1 could not be */
    json_t *request, *object, *old;
    char *why;
} view;

static int view_of(state *st, view *v)
{
    if (!v->made) {
        v->made = st->rq->versioned && st->rq->versioned(st->rq->versioned_arg, v->eq, &v->request,
                                                         &v->object, &v->old, &v->why) == 0
                      ? 1
                      : -1;
        if (v->made < 0 && !v->why)
            v->why = strdup("the request cannot be read");
    }
    return v->made;
}

static void view_clear(view *v)
{
    json_decref(v->request);
    json_decref(v->object);
    json_decref(v->old);
    free(v->why);
}

/* One evaluation: a policy, a binding, one param. */
typedef struct evaluation {
    sk_arena *ar;
    const policy *p;
    const sk_cel_val *object, *old, *request, *ns, *params;
    const sk_policy_authz *authz; /* the request's (NULL: none) */
    const sk_cel_val **var_vals;  /* each variable once evaluated */
    unsigned char *var_busy;
    uint64_t left;       /* kube's runtime cost budget */
    uint64_t steps_left; /* the evaluator's own bound beside it */
    int spent;           /* the budget ran out */
} evaluation;

static const sk_cel_val *run(evaluation *x, const expr *e);

static const sk_cel_val *resolve(void *ctx, sk_arena *a, const char *name)
{
    evaluation *x = ctx;
    if (strcmp(name, "object") == 0)
        return x->object;
    if (strcmp(name, "oldObject") == 0)
        return x->old;
    if (strcmp(name, "request") == 0)
        return x->request;
    if (strcmp(name, "namespaceObject") == 0)
        return x->ns;
    if (strcmp(name, "params") == 0 && x->p->param_kind)
        return x->params;
    if (strncmp(name, "variables.", 10) != 0)
        return x->authz ? sk_policy_authz_variable((void *)x->authz, a, name) : NULL;
    /* the last variable of a name, as kube's map of compiled variables
     * keeps it (and cel/admission.h types it) */
    for (size_t i = x->p->n_vars; i-- > 0;) {
        const variable *v = &x->p->vars[i];
        if (strcmp(v->name, name + 10) != 0)
            continue;
        if (!x->var_vals[i]) {
            if (x->var_busy[i])
                return sk_cel_error(x->ar, "composited variable \"%s\" refers to itself", v->name);
            x->var_busy[i] = 1;
            const sk_cel_val *r = run(x, &v->e);
            if (v->e.error)
                /* kube's variableAccessor, around the compiler's own text */
                r = sk_cel_error(x->ar, "composited variable \"%s\" fails to compile: %s", v->name,
                                 v->e.error + strlen(COMPILATION_ERROR));
            else if (r->type == SK_CEL_V_ERROR)
                r = sk_cel_error(x->ar, "composited variable \"%s\" fails to evaluate: %s", v->name,
                                 r->u.str.s);
            x->var_vals[i] = r;
            x->var_busy[i] = 0;
        }
        return x->var_vals[i];
    }
    return NULL;
}

/* e's value under what is left of the budget (errors as values). */
static const sk_cel_val *run(evaluation *x, const expr *e)
{
    if (e->error)
        return sk_cel_error(x->ar, "%s", e->error);
    if (x->spent)
        return sk_cel_error(x->ar, "%s", budget_spent);
    sk_cel_eval_options o = {.resolve = resolve,
                             .resolve_ctx = x,
                             .cost_limit = SK_CEL_PER_CALL_LIMIT,
                             .optimize = 1,
                             .free_presence_tests = 1,
                             .max_steps = x->steps_left ? x->steps_left : 1};
    sk_policy_authz_options(x->authz, &o);
    sk_cel_usage used = {0};
    const sk_cel_val *v = sk_cel_eval(x->ar, e->tree, &o, &used);
    x->steps_left -= used.steps < x->steps_left ? used.steps : x->steps_left;
    /* a variable evaluated inside took its share already (kube's
     * composition cost, compared with the budget before the expression's) */
    if (x->spent || used.cost > x->left) {
        x->spent = 1;
        x->left = 0;
    } else {
        x->left -= used.cost;
    }
    return v;
}

static char *trimmed(const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    return strndup(s, len);
}

/* The message of a failed validation: its messageExpression's string
 * (one line, at most MAX_MESSAGE bytes), else its message, else
 * "failed expression: EXPR". New. */
static char *failure_message(evaluation *x, const validation *k)
{
    char *msg = NULL;
    if (k->message_e.text) {
        const sk_cel_val *m = run(x, &k->message_e);
        if (m->type == SK_CEL_V_STRING) {
            msg = trimmed(m->u.str.s, m->u.str.len);
            if (strlen(msg) > MAX_MESSAGE || strchr(msg, '\n')) {
                free(msg);
                msg = NULL;
            }
        }
        if (msg && !*msg) {
            free(msg);
            msg = NULL;
        }
    }
    if (!msg && k->message && *k->message)
        msg = trimmed(k->message, strlen(k->message));
    if (!msg) {
        sk_buf m = SK_BUF_INIT;
        char *t = trimmed(k->e.text, strlen(k->e.text));
        sk_buf_printf(&m, "failed expression: %s", t);
        free(t);
        msg = sk_buf_steal(&m, NULL);
    }
    return msg;
}

/* The error of e's evaluation as kube words it. New. */
static char *error_message(const expr *e, const sk_cel_val *v)
{
    sk_buf m = SK_BUF_INIT;
    if (e->error || strcmp(v->u.str.s, budget_spent) == 0)
        sk_buf_puts(&m, v->u.str.s);
    else
        sk_buf_printf(&m, "expression '%s' resulted in error: %s", e->text, v->u.str.s);
    return sk_buf_steal(&m, NULL);
}

/* The policy's audit annotations gathered over its bindings: key ->
 * distinct values, published as "POLICY/KEY" once they all ran. */
static void collect(json_t *collected, const char *key, const char *value)
{
    json_t *values = json_object_get(collected, key);
    if (!values) {
        values = json_array();
        json_object_set_new(collected, key, values);
    }
    size_t i;
    json_t *v;
    json_array_foreach(values, i, v) if (strcmp(json_string_value(v), value) == 0) return;
    json_array_append_new(values, json_string(value));
}

/* Validator.Validate for one param (NULL: none) on the request as vw
 * says, its decisions acted on. */
static void evaluate(state *st, const binding *b, const view *vw, const json_t *param,
                     json_t *collected)
{
    const policy *p = b->p;
    const sk_vap_request *rq = st->rq;
    evaluation x = {.p = p,
                    .authz = st->rq->authz,
                    .left = RUNTIME_BUDGET,
                    .steps_left = RUNTIME_BUDGET * SK_CEL_STEPS_PER_COST};
    x.ar = sk_arena_new();
    x.object = from_json(x.ar, vw->object);
    x.old = from_json(x.ar, vw->old);
    x.request = from_json(x.ar, vw->request);
    x.ns = from_json(x.ar, sk_webhook_ns_labels_from_object(&rq->a) ||
                                   strcmp(rq->a.resource, "namespaces") == 0
                               ? NULL
                               : namespace_of(st));
    x.params = from_json(x.ar, param);
    x.var_vals = sk_arena_alloc(x.ar, (p->n_vars + 1) * sizeof *x.var_vals);
    x.var_busy = sk_arena_alloc(x.ar, p->n_vars + 1);
    memset(x.var_vals, 0, (p->n_vars + 1) * sizeof *x.var_vals);
    memset(x.var_busy, 0, p->n_vars + 1);
    sk_cel_eval_options copt = {.resolve = resolve, .resolve_ctx = &x};
    sk_policy_authz_options(x.authz, &copt);
    char *failures = NULL;
    int m = sk_conditions_match(p->conds, &copt, &failures);
    if (m < 0 && !p->ignore)
        act(st, p, b, 0, failures, NULL);
    free(failures);
    if (m <= 0)
        goto out;
    for (size_t i = 0; i < p->n_vals; i++) {
        const validation *k = &p->vals[i];
        const sk_cel_val *v = run(&x, &k->e);
        if (x.spent) {
            /* kube's filter stops, and its one error is the decision */
            if (!p->ignore)
                act(st, p, b, 0, budget_spent, NULL);
            goto out;
        }
        if (v->type == SK_CEL_V_ERROR) {
            if (!p->ignore) {
                char *msg = error_message(&k->e, v);
                act(st, p, b, i, msg, NULL);
                free(msg);
            }
        } else if (!(v->type == SK_CEL_V_BOOL && v->u.b)) {
            char *msg = failure_message(&x, k);
            act(st, p, b, i, msg, k->reason);
            free(msg);
        }
    }
    /* the audit annotations have a budget of their own */
    x.left = RUNTIME_BUDGET;
    x.steps_left = RUNTIME_BUDGET * SK_CEL_STEPS_PER_COST;
    x.spent = 0;
    for (size_t i = 0; i < p->n_anns; i++) {
        const annotation *k = &p->anns[i];
        const sk_cel_val *v = run(&x, &k->e);
        if (v->type == SK_CEL_V_STRING) {
            char *value = strndup(v->u.str.s,
                                  v->u.str.len < MAX_AUDIT_VALUE ? v->u.str.len : MAX_AUDIT_VALUE);
            collect(collected, k->key, value);
            free(value);
        } else if (v->type != SK_CEL_V_NULL && !p->ignore) {
            sk_buf why = SK_BUF_INIT;
            if (v->type == SK_CEL_V_ERROR) {
                char *msg = error_message(&k->e, v);
                sk_buf_puts(&why, msg);
                free(msg);
            } else {
                sk_buf_printf(&why, "valueExpression '%s' resulted in unsupported return type: %s",
                              k->e.text, sk_cel_type_name(v));
            }
            deny(st, p, b, why.data, NULL);
            sk_buf_free(&why);
        }
        if (x.spent)
            break;
    }
out:
    sk_arena_free(x.ar);
}

/* CollectParams for b: 0 with *found (new, possibly empty), or -1 after a
 * configuration error. */
static int collect_params(state *st, const binding *b, json_t **found)
{
    const policy *p = b->p;
    if (b->param_sel_error) {
        config_error(st, p, b, b->param_sel_error);
        return -1;
    }
    const char *name = str(b->param_ref, "name");
    const char *ns = str(b->param_ref, "namespace");
    char *why = NULL;
    if (!st->rq->params ||
        st->rq->params(st->rq->params_arg, p->param_version, p->param_kind, ns ? ns : "",
                       st->rq->a.ns, name && *name ? name : NULL, b->param_sel, found, &why) < 0) {
        config_error(st, p, b, why ? why : "params cannot be read");
        free(why);
        return -1;
    }
    const char *action = str(b->param_ref, "parameterNotFoundAction");
    if (json_array_size(*found) == 0 && action && strcmp(action, "Deny") == 0) {
        config_error(st, p, b,
                     "no params found for policy binding with `Deny` parameterNotFoundAction");
        json_decref(*found);
        return -1;
    }
    return 0;
}

/* CollectParams, then an evaluation per param (none under Allow when none
 * is found), on the request in the policy's version (vw, made when first
 * needed, as kube converts only for a policy that evaluates). */
static void run_binding(state *st, const binding *b, view *vw, json_t *collected)
{
    const policy *p = b->p;
    json_t *found = NULL;
    if (p->param_kind && b->param_ref && collect_params(st, b, &found) < 0)
        return;
    if (found && json_array_size(found) == 0) {
        json_decref(found);
        return;
    }
    if (view_of(st, vw) < 0) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, "failed to convert object version: %s", vw->why);
        config_error(st, p, b, m.data);
        sk_buf_free(&m);
    } else if (!found) {
        evaluate(st, b, vw, NULL, collected);
    } else {
        size_t i;
        json_t *param;
        json_array_foreach(found, i, param) evaluate(st, b, vw, param, collected);
    }
    json_decref(found);
}

json_t *sk_vap_validate(const sk_vap_set *s, const sk_vap_request *rq, json_t *warnings,
                        json_t *annotations)
{
    if (s->n_binds == 0 || sk_webhook_exempt(&rq->a))
        return NULL;
    state st = {.rq = rq, .warnings = warnings, .annotations = annotations};
    size_t i = 0;
    while (i < s->n_binds) {
        const policy *p = s->binds[i].p;
        size_t end = i;
        while (end < s->n_binds && s->binds[end].p == p)
            end++;
        char *err = NULL;
        view vw = {0};
        int m = criteria_match(&st, &p->match, &vw.eq, &err);
        if (m < 0)
            config_error(&st, p, NULL, err);
        free(err);
        if (m > 0) {
            json_t *collected = json_object();
            for (size_t j = i; j < end; j++) {
                const binding *b = &s->binds[j];
                const sk_resource *unused;
                err = NULL;
                int bm = criteria_match(&st, &b->match, &unused, &err);
                if (bm < 0)
                    config_error(&st, p, b, err);
                free(err);
                if (bm > 0)
                    run_binding(&st, b, &vw, collected);
            }
            const char *key;
            json_t *values;
            json_object_foreach(collected, key, values)
            {
                sk_buf k = SK_BUF_INIT, v = SK_BUF_INIT;
                sk_buf_printf(&k, "%s/%s", p->name, key);
                size_t n;
                json_t *one;
                json_array_foreach(values, n, one)
                    sk_buf_printf(&v, "%s%s", n ? ", " : "", json_string_value(one));
                annotate(annotations, k.data, v.data ? v.data : "");
                sk_buf_free(&k);
                sk_buf_free(&v);
            }
            json_decref(collected);
        }
        view_clear(&vw);
        i = end;
    }
    return st.denial;
}

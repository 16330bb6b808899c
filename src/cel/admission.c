/*
 * admission.c - see admission.h.
 *
 * kube's request and namespace types are DeclTypes of fixed fields; here
 * they are object types whose data is their field list (objdef), read by
 * the checker's field callback, so they are written once, below, in the
 * order BuildRequestType and BuildNamespaceType give them. The composed
 * variables are an object type whose data is the compiler itself: its
 * list grows as variables compile, and a lookup sees the list as it is
 * then (the last of a name wins, as kube's map of fields keeps it).
 */
#include "cel/admission.h"
#include "cel/check.h"
#include "cel/issues.h"
#include "cel/parse.h"
#include "cel/types.h"

#include <string.h>

/* A field's type: a primitive, a list or map of strings, or an object. */
typedef enum fkind {
    F_STRING,
    F_BOOL,
    F_INT,
    F_TIMESTAMP,
    F_DYN,
    F_STRINGS,     /* list(string) */
    F_STRING_MAP,  /* map(string, string) */
    F_STRINGS_MAP, /* map(string, list(string)) */
    F_OBJECT,      /* obj */
    F_OBJECT_LIST, /* list(obj) */
} fkind;

typedef struct objdef objdef;
typedef struct fielddef {
    const char *name;
    fkind kind;
    const objdef *obj;
} fielddef;
struct objdef {
    const char *name;
    const fielddef *fields;
    size_t n;
};

#define OBJ(var, name, ...)                                                                        \
    static const fielddef var##_fields[] = {__VA_ARGS__};                                          \
    static const objdef var = {name, var##_fields, sizeof var##_fields / sizeof *var##_fields}

OBJ(gvk, "kubernetes.GroupVersionKind", {"group", F_STRING, NULL}, {"version", F_STRING, NULL},
    {"kind", F_STRING, NULL});
OBJ(gvr, "kubernetes.GroupVersionResource", {"group", F_STRING, NULL}, {"version", F_STRING, NULL},
    {"resource", F_STRING, NULL});
OBJ(user_info, "kubernetes.UserInfo", {"username", F_STRING, NULL}, {"uid", F_STRING, NULL},
    {"groups", F_STRINGS, NULL}, {"extra", F_STRINGS_MAP, NULL});
OBJ(request, "kubernetes.AdmissionRequest", {"kind", F_OBJECT, &gvk}, {"resource", F_OBJECT, &gvr},
    {"subResource", F_STRING, NULL}, {"requestKind", F_OBJECT, &gvk},
    {"requestResource", F_OBJECT, &gvr}, {"requestSubResource", F_STRING, NULL},
    {"name", F_STRING, NULL}, {"namespace", F_STRING, NULL}, {"operation", F_STRING, NULL},
    {"userInfo", F_OBJECT, &user_info}, {"dryRun", F_BOOL, NULL}, {"options", F_DYN, NULL});
OBJ(ns_spec, "kubernetes.NamespaceSpec", {"finalizers", F_STRINGS, NULL});
OBJ(ns_condition, "kubernetes.NamespaceCondition", {"status", F_STRING, NULL},
    {"type", F_STRING, NULL}, {"lastTransitionTime", F_TIMESTAMP, NULL},
    {"message", F_STRING, NULL}, {"reason", F_STRING, NULL});
OBJ(ns_status, "kubernetes.NamespaceStatus", {"conditions", F_OBJECT_LIST, &ns_condition},
    {"phase", F_STRING, NULL});
OBJ(ns_meta, "kubernetes.NamespaceMetadata", {"name", F_STRING, NULL},
    {"generateName", F_STRING, NULL}, {"namespace", F_STRING, NULL}, {"labels", F_STRING_MAP, NULL},
    {"annotations", F_STRING_MAP, NULL}, {"UID", F_STRING, NULL},
    {"creationTimestamp", F_TIMESTAMP, NULL}, {"deletionGracePeriodSeconds", F_INT, NULL},
    {"deletionTimestamp", F_TIMESTAMP, NULL}, {"generation", F_INT, NULL},
    {"resourceVersion", F_STRING, NULL}, {"finalizers", F_STRINGS, NULL});
OBJ(ns, "kubernetes.Namespace", {"metadata", F_OBJECT, &ns_meta}, {"spec", F_OBJECT, &ns_spec},
    {"status", F_OBJECT, &ns_status});

/* kube's variablesTypeName */
#define VARIABLES_TYPE "kubernetes.variables"

typedef struct composed {
    const char *name;
    const sk_cel_ty *type;
} composed;

struct sk_cel_adm {
    sk_arena *a;
    composed *vars;
    size_t n, cap;
    const sk_cel_ty *variables; /* the kubernetes.variables type; data: this */
    /* the type checker's mode (sk_cel_adm_typecheck): object typed */
    const sk_cel_ty *object, *params;
    sk_cel_check_field_fn field;
    void *field_ctx;
};

/* The objects whose fields this module declares (the others are the
 * type checker's caller's). */
static const objdef *const declared[] = {&gvk,          &gvr,       &user_info, &request, &ns_spec,
                                         &ns_condition, &ns_status, &ns_meta,   &ns};

sk_cel_adm *sk_cel_adm_new(sk_arena *a)
{
    sk_cel_adm *c = sk_arena_alloc(a, sizeof *c);
    memset(c, 0, sizeof *c);
    c->a = a;
    c->variables = sk_cel_ty_object(a, VARIABLES_TYPE, c);
    return c;
}

void sk_cel_adm_typecheck(sk_cel_adm *c, const sk_cel_ty *object, const sk_cel_ty *params,
                          sk_cel_check_field_fn field, void *field_ctx)
{
    c->object = object;
    c->params = params;
    c->field = field;
    c->field_ctx = field_ctx;
}

static const sk_cel_ty *object_type(sk_arena *a, const objdef *o)
{
    return sk_cel_ty_object(a, o->name, o);
}

static const sk_cel_ty *field_type(sk_arena *a, const fielddef *f)
{
    const sk_cel_ty *s = sk_cel_ty_of(SK_CEL_TY_STRING);
    switch (f->kind) {
    case F_STRING:
        return s;
    case F_BOOL:
        return sk_cel_ty_of(SK_CEL_TY_BOOL);
    case F_INT:
        return sk_cel_ty_of(SK_CEL_TY_INT);
    case F_TIMESTAMP:
        return sk_cel_ty_of(SK_CEL_TY_TIMESTAMP);
    case F_DYN:
        return sk_cel_ty_of(SK_CEL_TY_DYN);
    case F_STRINGS:
        return sk_cel_ty_list(a, s);
    case F_STRING_MAP:
        return sk_cel_ty_map(a, s, s);
    case F_STRINGS_MAP:
        return sk_cel_ty_map(a, s, sk_cel_ty_list(a, s));
    case F_OBJECT:
        return object_type(a, f->obj);
    case F_OBJECT_LIST:
        return sk_cel_ty_list(a, object_type(a, f->obj));
    }
    return sk_cel_ty_of(SK_CEL_TY_DYN);
}

/* The checker's field callback: the composed variables' object reads the
 * compiler's list, the others their objdef. */
static const sk_cel_ty *adm_field(void *ctx, sk_arena *a, const sk_cel_ty *object, const char *name)
{
    const sk_cel_adm *c = ctx;
    if (object->data == c) {
        for (size_t i = c->n; i-- > 0;)
            if (strcmp(c->vars[i].name, name) == 0)
                return c->vars[i].type;
        return NULL;
    }
    const objdef *o = NULL;
    for (size_t i = 0; i < sizeof declared / sizeof *declared; i++)
        if (object->data == declared[i])
            o = declared[i];
    if (!o)
        return c->field ? c->field(c->field_ctx, a, object, name) : NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->fields[i].name, name) == 0)
            return field_type(a, &o->fields[i]);
    return NULL;
}

/* convertCelTypeToDeclType: what a variable's result type is to the
 * expressions after it. */
static const sk_cel_ty *decl_kept(sk_arena *a, const sk_cel_ty *t)
{
    switch (t->kind) {
    case SK_CEL_TY_BOOL:
    case SK_CEL_TY_BYTES:
    case SK_CEL_TY_DOUBLE:
    case SK_CEL_TY_DURATION:
    case SK_CEL_TY_INT:
    case SK_CEL_TY_NULL:
    case SK_CEL_TY_STRING:
    case SK_CEL_TY_TIMESTAMP:
    case SK_CEL_TY_UINT:
        return t;
    case SK_CEL_TY_LIST:
        return sk_cel_ty_list(a, decl_kept(a, t->p[0]));
    case SK_CEL_TY_MAP:
        return sk_cel_ty_map(a, decl_kept(a, t->p[0]), decl_kept(a, t->p[1]));
    default:
        return sk_cel_ty_of(SK_CEL_TY_DYN);
    }
}

static void add_variable(sk_cel_adm *c, const char *name, const sk_cel_ty *t)
{
    c->vars = sk_arena_grow(c->a, c->vars, c->n, &c->cap, sizeof *c->vars);
    c->vars[c->n++] = (composed){sk_arena_strdup(c->a, name), t};
}

/* ReturnTypes' check: 1 if t is exactly one of result's types. */
static int result_allows(sk_cel_adm_result result, const sk_cel_ty *t)
{
    switch (result) {
    case SK_CEL_ADM_BOOL:
        return t->kind == SK_CEL_TY_BOOL;
    case SK_CEL_ADM_STRING:
        return t->kind == SK_CEL_TY_STRING;
    case SK_CEL_ADM_STRING_OR_NULL:
        return t->kind == SK_CEL_TY_STRING || t->kind == SK_CEL_TY_NULL;
    case SK_CEL_ADM_ANY:
        return 1;
    }
    return 0;
}

const sk_cel_expr *sk_cel_adm_compile(sk_cel_adm *c, const char *src, unsigned decl, int stored,
                                      sk_cel_adm_result result, const char *variable,
                                      sk_buf *detail)
{
    static const sk_cel_parse_options stored_opts = {
        .enable_optional_syntax = 1, .enable_optional_macros = 1, .enable_two_var_macros = 1};
    static const sk_cel_parse_options new_opts = {.enable_optional_syntax = 1,
                                                  .enable_optional_macros = 1};
    sk_arena *a = c->a;
    size_t len = strlen(src);
    const sk_cel_ty *dyn = sk_cel_ty_of(SK_CEL_TY_DYN), *out = dyn;
    sk_cel_check_var vars[8];
    size_t n = 0;
    const sk_cel_expr *tree = NULL;
    int typecheck = c->object != NULL;
    vars[n++] = (sk_cel_check_var){"object", typecheck ? c->object : dyn};
    vars[n++] = (sk_cel_check_var){"oldObject", typecheck ? c->object : dyn};
    vars[n++] = (sk_cel_check_var){"namespaceObject", object_type(a, &ns)};
    vars[n++] = (sk_cel_check_var){"request", object_type(a, &request)};
    if ((decl & SK_CEL_ADM_PARAMS) && (!typecheck || c->params))
        vars[n++] = (sk_cel_check_var){"params", typecheck ? c->params : dyn};
    if (decl & SK_CEL_ADM_AUTHORIZER) {
        vars[n++] = (sk_cel_check_var){
            "authorizer", sk_cel_ty_object(a, "kubernetes.authorization.Authorizer", NULL)};
        if (!typecheck)
            vars[n++] = (sk_cel_check_var){
                "authorizer.requestResource",
                sk_cel_ty_object(a, "kubernetes.authorization.ResourceCheck", NULL)};
    }
    if (decl & SK_CEL_ADM_VARIABLES)
        vars[n++] = (sk_cel_check_var){"variables", c->variables};
    sk_cel_check_env env = {.vars = vars,
                            .nvars = n,
                            .field = adm_field,
                            .field_ctx = c,
                            .cross_type_numeric = 1,
                            .homogeneous_literals = 1,
                            .literal_validators = 1};
    sk_cel_ast *ast = sk_cel_parse(a, src, len, stored ? &stored_opts : &new_opts);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    sk_buf issues = SK_BUF_INIT;
    sk_cel_checked *checked = NULL;
    if (!e)
        sk_cel_issues_format(&issues, src, len, ast);
    else
        checked = sk_cel_check(a, e, src, len, &env, &issues);
    if (!checked) {
        sk_buf_printf(detail, "%s%s",
                      typecheck ? "" : "compilation failed: ", issues.data ? issues.data : "");
        goto out;
    }
    out = sk_cel_checked_type(checked);
    if (!result_allows(result, out)) {
        sk_buf_puts(detail, result == SK_CEL_ADM_STRING_OR_NULL ? "must evaluate to one of "
                                                                  "[string null_type] but got "
                            : result == SK_CEL_ADM_STRING       ? "must evaluate to string but got "
                                                                : "must evaluate to bool but got ");
        sk_cel_ty_string(detail, out);
        goto out;
    }
    tree = e;
out:
    if (variable)
        add_variable(c, variable, checked ? decl_kept(a, out) : dyn);
    sk_buf_free(&issues);
    return tree;
}

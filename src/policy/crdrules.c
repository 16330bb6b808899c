/*
 * crdrules.c - see crdrules.h. After k8s.io/apiextensions-apiserver 1.32
 * (pkg/apiserver/schema/cel: compilation.go, validation.go;
 * pkg/apis/apiextensions/validation/validation.go for the CRD-side checks)
 * and k8s.io/apiserver 1.32 (pkg/cel/common/values.go for how values look
 * to CEL, pkg/cel/escaping.go for property names, pkg/cel/common/
 * equality.go for ratcheting's correlation).
 *
 * The compiled form is a tree over the schema's structural spine
 * (properties, additionalProperties, items), each node with its parsed
 * rules; nodes with no rules at or below them are left out of the walk.
 * It is built once per served version (the cache below) and is immutable:
 * requests share it across threads. Each evaluation works in its own
 * arena; `self` is converted once per value a node with rules meets.
 *
 * Rules and message expressions are compiled as kube compiles them: parsed,
 * then type-checked (cel/check.h) with self and oldSelf of the node's type
 * as kube's SchemaDeclType gives it (objects with their escaped fields,
 * the resource root's apiVersion, kind and metadata.name/generateName,
 * maps for additionalProperties, lists, int-or-string as dyn, string
 * formats as bytes, duration, timestamp), with Kubernetes' environment
 * options (cross-type numeric comparisons, homogeneous literals); a rule
 * must then be exactly bool, a message expression exactly string. kube
 * names self's type after the clock; here it is "selfType0".
 *
 * The evaluator may still lack part of kube's CEL library, or a value
 * form kube parses (a strfmt duration such as "1d" stays a string here:
 * see formatted()). A rule that calls beyond the core and fails with what
 * such a gap gives ("no such overload", "... is not supported yet", an
 * undeclared reference the checker, which declares kube's library, let
 * through) is not enforced for that value, and a warning says so: valid
 * objects are not refused for the server's gap, and the rule is enforced
 * as soon as the evaluator has the function.
 *
 * Cost at CRD write is kube's own: each expression's static estimate
 * (cel/cost.h, sizes from the schema as kube's SchemaDeclType estimates
 * them: maxItems, maxProperties, maxLength, else what a 3 MiB request can
 * hold) times the values the rule may run on (the product of maxItems and
 * maxProperties above it, else kube's estimate from the node's smallest
 * JSON form), against StaticEstimatedCostLimit a rule and
 * StaticEstimatedCRDCostLimit a schema. Cost at runtime is kube's too:
 * the evaluator's actual cost (cel/eval.h, cel-go's tracker with kube's
 * library costs) against PerCallLimit a rule and RuntimeCELCostBudget an
 * object, in validation.go's order (the cost against what is left of the
 * budget first, then the per-call error). Beside it the evaluator's steps,
 * SK_CEL_STEPS_PER_COST of them for each unit of the budget, bound the
 * work cel-go's cost undercounts (a regular expression's search); running
 * out of them is an evaluation error of the rule, the server's own.
 */
#include "policy/crdrules.h"
#include "policy/formats.h"
#include "cel/check.h"
#include "cel/cost.h"
#include "kube/crschema.h"
#include "kube/structural.h"
#include "kube/typed.h"
#include "cel/time.h"
#include "cel/value.h"
#include "cel/eval.h"
#include "cel/issues.h"
#include "cel/parse.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/check.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define PER_OBJECT_BUDGET 10000000ULL       /* celconfig.RuntimeCELCostBudget */
#define MAX_MESSAGE_BYTES (5 * 1024)        /* MaxEvaluatedMessageExpressionSizeBytes */
#define MAX_REQUEST_BYTES (3 * 1024 * 1024) /* celconfig.MaxRequestSizeBytes */
#define STATIC_COST_LIMIT 10000000ULL       /* StaticEstimatedCostLimit */
#define STATIC_CRD_COST_LIMIT 100000000ULL  /* StaticEstimatedCRDCostLimit */

/* ---- the compiled tree --------------------------------------------------- */

typedef struct rule {
    const json_t *raw;       /* the x-kubernetes-validations entry */
    const char *src;         /* rule as written */
    const sk_cel_expr *expr; /* NULL: empty, or refused at compile */
    const char *error;       /* why it was refused (kube's Error.Detail), or NULL */
    const char *message;     /* trimmed; "" when unset */
    const char *msg_src;     /* messageExpression or NULL */
    const sk_cel_expr *msg_expr;
    const char *msg_error;  /* why messageExpression was refused, or NULL */
    const char *reason;     /* NULL: FieldValueInvalid */
    const char *field_path; /* normalized, or NULL */
    int uses_old_self, optional_old_self;
    /* the static cost estimates (cel/cost.h) of rule and messageExpression,
     * and the cardinality kube assumes where the schema gives none */
    uint64_t max_cost, msg_max_cost, max_cardinality;
    const char *ext_fn; /* a function called beyond the evaluator's documented core, or NULL */
} rule;

typedef struct rnode rnode;

typedef struct prop {
    const char *name;    /* as in the object */
    const char *escaped; /* the name CEL sees; NULL when it cannot be escaped */
    rnode *n;
} prop;

struct rnode {
    const json_t *raw;
    const char *type; /* "" when unset */
    int nullable, int_or_string, preserve, embedded;
    int resource;           /* a resource's root: the CRD's, or an embedded resource */
    const char *list_type;  /* NULL when unset */
    const json_t *map_keys; /* x-kubernetes-list-map-keys */
    int map_correlatable;   /* x-kubernetes-map-type unset, granular or atomic */
    rule *rules;
    size_t nrules;
    int has_props; /* "properties" given: an object with fields, not a map */
    prop *props;
    size_t nprops;
    rnode *ap, *items;
    int active; /* rules here or below */
};

struct sk_crdrules {
    sk_arena *a;
    json_t *schema; /* the copy the tree points into */
    rnode *root;
};

/* ---- names ----------------------------------------------------------------- */

static const char *const reserved[] = {
    "true",     "false",   "null",      "in",       "as",  "break",  "const",
    "continue", "else",    "for",       "function", "if",  "import", "let",
    "loop",     "package", "namespace", "return",   "var", "void",   "while",
};

/* cel.Escape: the identifier CEL sees for property name, NULL if none. */
static const char *escape(sk_arena *a, const char *name)
{
    if (!*name || isdigit((unsigned char)*name))
        return NULL;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(name, reserved[i]) == 0)
            return sk_arena_printf(a, "__%s__", name);
    sk_buf b = SK_BUF_INIT;
    const char *out = NULL;
    for (const char *p = name; *p; p++) {
        if (p[0] == '_' && p[1] == '_') {
            sk_buf_puts(&b, "__underscores__");
            p++;
        } else if (*p == '.') {
            sk_buf_puts(&b, "__dot__");
        } else if (*p == '-') {
            sk_buf_puts(&b, "__dash__");
        } else if (*p == '/') {
            sk_buf_puts(&b, "__slash__");
        } else if (isalnum((unsigned char)*p) || *p == '_') {
            sk_buf_putc(&b, *p);
        } else {
            goto out;
        }
    }
    out = sk_arena_strdup(a, b.data ? b.data : "");
out:
    sk_buf_free(&b);
    return out;
}

/* ---- rules: what a compile can tell ------------------------------------------ */

/* kube's environments: the one stored expressions compile in (every
 * library of 1.32, two-variable comprehensions included), and the one a
 * new expression is checked in when a CRD is written, the compatibility
 * version's (1.31: without them). */
static const sk_cel_parse_options stored_opts = {
    .enable_optional_syntax = 1, .enable_optional_macros = 1, .enable_two_var_macros = 1};
static const sk_cel_parse_options new_opts = {.enable_optional_syntax = 1,
                                              .enable_optional_macros = 1};

/* The expressions a CRD already had (findPreexistingExpressions): on an
 * update they compile in the stored environment, new ones in the new. */
typedef struct exprset {
    const char **rules, **msgs;
    size_t nrules, nmsgs, caprules, capmsgs;
} exprset;

static int in_set(const char *const *set, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(set[i], s) == 0)
            return 1;
    return 0;
}

/* Whether kube gives schema node n a CEL type (SchemaDeclType not nil):
 * a field without one is left out of its object's type. */
static int has_decl_type(const rnode *n)
{
    const char *t = n->type;
    if (n->int_or_string)
        return 1;
    if (strcmp(t, "array") == 0)
        return n->items && has_decl_type(n->items);
    if (strcmp(t, "object") == 0)
        return !n->ap || has_decl_type(n->ap);
    return strcmp(t, "string") == 0 || strcmp(t, "boolean") == 0 || strcmp(t, "number") == 0 ||
           strcmp(t, "integer") == 0;
}

/* An object type's node as the checker's field callback sees it: a schema
 * node (a resource's root shows apiVersion, kind and metadata too), or the
 * metadata kube shows there (name and generateName). */
typedef struct objtype {
    const rnode *n;
    int resource, meta;
} objtype;

/* Whether kube's WithTypeAndObjectMeta leaves resource root n as it is:
 * it already declares kind and apiVersion strings and a metadata object
 * with name and generateName strings (a built-in kind's schema, whose
 * metadata is ObjectMeta's), so its metadata shows every field declared. */
static int declares_meta(const rnode *n)
{
    const rnode *kind = NULL, *api = NULL, *meta = NULL, *name = NULL, *gen = NULL;
    for (size_t i = 0; i < n->nprops; i++) {
        const char *p = n->props[i].name;
        if (strcmp(p, "kind") == 0)
            kind = n->props[i].n;
        else if (strcmp(p, "apiVersion") == 0)
            api = n->props[i].n;
        else if (strcmp(p, "metadata") == 0)
            meta = n->props[i].n;
    }
    for (size_t i = 0; meta && i < meta->nprops; i++) {
        if (strcmp(meta->props[i].name, "name") == 0)
            name = meta->props[i].n;
        else if (strcmp(meta->props[i].name, "generateName") == 0)
            gen = meta->props[i].n;
    }
    return kind && strcmp(kind->type, "string") == 0 && api && strcmp(api->type, "string") == 0 &&
           meta && strcmp(meta->type, "object") == 0 && meta->has_props && name &&
           strcmp(name->type, "string") == 0 && gen && strcmp(gen->type, "string") == 0;
}

/* The type kube's SchemaDeclType gives node n (resource: a resource's
 * root), or NULL for none. name: the name an object type gets
 * (MaybeAssignTypeName: the root's, then "<parent>.<field>" down through
 * fields, "<list>.@idx" for a list's items, "<map>.@elem" for a map's
 * values). */
static const sk_cel_ty *decl_type(sk_arena *a, const rnode *n, int resource, const char *name)
{
    if (!n || !has_decl_type(n))
        return NULL;
    const char *t = n->type;
    if (n->int_or_string)
        return sk_cel_ty_of(SK_CEL_TY_DYN);
    if (strcmp(t, "array") == 0)
        return sk_cel_ty_list(
            a, decl_type(a, n->items, n->items->embedded, sk_arena_printf(a, "%s.@idx", name)));
    if (strcmp(t, "object") == 0) {
        if (n->ap)
            return sk_cel_ty_map(
                a, sk_cel_ty_of(SK_CEL_TY_STRING),
                decl_type(a, n->ap, n->ap->embedded, sk_arena_printf(a, "%s.@elem", name)));
        objtype *o = sk_arena_alloc(a, sizeof *o);
        *o = (objtype){n, resource && !declares_meta(n), 0};
        return sk_cel_ty_object(a, name, o);
    }
    if (strcmp(t, "integer") == 0)
        return sk_cel_ty_of(SK_CEL_TY_INT);
    if (strcmp(t, "number") == 0)
        return sk_cel_ty_of(SK_CEL_TY_DOUBLE);
    if (strcmp(t, "boolean") == 0)
        return sk_cel_ty_of(SK_CEL_TY_BOOL);
    const char *f = sk_structural_kw_str(n->raw, "format");
    if (strcmp(f, "byte") == 0)
        return sk_cel_ty_of(SK_CEL_TY_BYTES);
    if (strcmp(f, "duration") == 0)
        return sk_cel_ty_of(SK_CEL_TY_DURATION);
    if (strcmp(f, "date") == 0 || strcmp(f, "date-time") == 0)
        return sk_cel_ty_of(SK_CEL_TY_TIMESTAMP);
    return sk_cel_ty_of(SK_CEL_TY_STRING);
}

/* The checker's field callback over the schema (sk_cel_check_field_fn). */
const sk_cel_ty *sk_crdrules_field(void *ctx, sk_arena *a, const sk_cel_ty *object, const char *f)
{
    (void)ctx;
    const objtype *o = object->data;
    const char *sub = sk_arena_printf(a, "%s.%s", object->name, f);
    if (o->meta)
        return strcmp(f, "name") == 0 || strcmp(f, "generateName") == 0
                   ? sk_cel_ty_of(SK_CEL_TY_STRING)
                   : NULL;
    if (o->resource && (strcmp(f, "apiVersion") == 0 || strcmp(f, "kind") == 0))
        return sk_cel_ty_of(SK_CEL_TY_STRING);
    if (o->resource && strcmp(f, "metadata") == 0) {
        objtype *m = sk_arena_alloc(a, sizeof *m);
        *m = (objtype){NULL, 0, 1};
        return sk_cel_ty_object(a, sub, m);
    }
    const rnode *n = o->n;
    for (size_t i = 0; i < n->nprops; i++)
        if (n->props[i].escaped && strcmp(n->props[i].escaped, f) == 0)
            return decl_type(a, n->props[i].n, n->props[i].n->embedded, sub);
    return NULL;
}

/* The functions cel/eval.h documents as supported: CEL's operators and
 * its core functions. A rule calling anything else (an extension
 * library's function, matches, timestamps) may meet a gap of the
 * evaluator rather than a fault of the object (see gap_error). */
static int core_function(const char *f)
{
    static const char *const core[] = {"size",   "int",      "uint",       "double",
                                       "string", "bytes",    "bool",       "type",
                                       "dyn",    "contains", "startsWith", "endsWith"};
    if (f[0] == '_' || f[0] == '@' || strcmp(f, "!_") == 0 || strcmp(f, "-_") == 0)
        return 1;
    for (size_t i = 0; i < sizeof core / sizeof *core; i++)
        if (strcmp(f, core[i]) == 0)
            return 1;
    return 0;
}

/* The first function e calls beyond the core, in source order, or NULL. */
static const char *ext_function(const sk_cel_expr *e);

static int ext_function_child(void *found, const sk_cel_expr *child)
{
    return (*(const char **)found = ext_function(child)) != NULL;
}

static const char *ext_function(const sk_cel_expr *e)
{
    const char *f = NULL;
    sk_cel_children(e, ext_function_child, &f);
    if (!f && e->kind == SK_CEL_CALL && !core_function(e->u.call.function))
        f = e->u.call.function;
    return f;
}

/* ---- sizes, as kube's SchemaDeclType estimates them ------------------------- */

/* A schema keyword that is an integer, clamped at 0 (zeroIfNegative);
 * -1 when unset. */
static int64_t kw_count(const rnode *n, const char *kw)
{
    const json_t *v = sk_structural_kw(n->raw, kw);
    if (!json_is_integer(v))
        return -1;
    return json_integer_value(v) < 0 ? 0 : json_integer_value(v);
}

/* MinSerializedSize: the fewest bytes a value of n's type takes in JSON. */
static uint64_t min_size(const rnode *n)
{
    const char *t = n->type, *f = sk_structural_kw_str(n->raw, "format");
    if (n->int_or_string)
        return 1;
    if (strcmp(t, "boolean") == 0)
        return 4;
    if (strcmp(t, "number") == 0 || strcmp(t, "integer") == 0)
        return 1;
    if (strcmp(t, "string") == 0)
        return strcmp(f, "duration") == 0    ? 3
               : strcmp(f, "date") == 0      ? 12
               : strcmp(f, "date-time") == 0 ? 21
                                             : 2;
    uint64_t size = 2;
    if (strcmp(t, "object") == 0 && !n->ap) {
        const json_t *req = sk_structural_kw(n->raw, "required");
        for (size_t i = 0; i < n->nprops; i++) {
            const rnode *p = n->props[i].n;
            int required = 0;
            size_t k;
            const json_t *r;
            json_array_foreach(req, k, r) required |=
                strcmp(json_string_value(r) ? json_string_value(r) : "", n->props[i].name) == 0;
            if (required && has_decl_type(p) && !sk_structural_kw(p->raw, "default"))
                size += strlen(n->props[i].name) + min_size(p) + 4;
        }
    }
    return size;
}

/* MaxElements of n's type: a string's length (bytes, 4 a character), a
 * list's items, a map's entries; estimated from the request size bound
 * where maxLength, maxItems or maxProperties is not given. */
static uint64_t max_elements(const rnode *n)
{
    const char *t = n->type, *f = sk_structural_kw_str(n->raw, "format");
    const uint64_t unbounded = MAX_REQUEST_BYTES - 2;
    int64_t m;
    if (n->int_or_string)
        return unbounded;
    if (strcmp(t, "array") == 0)
        return (m = kw_count(n, "maxItems")) >= 0 ? (uint64_t)m
                                                  : unbounded / (min_size(n->items) + 1);
    if (strcmp(t, "object") == 0 && n->ap)
        return (m = kw_count(n, "maxProperties")) >= 0 ? (uint64_t)m
                                                       : unbounded / (min_size(n->ap) + 6);
    if (strcmp(t, "string") != 0)
        return 0;
    if (strcmp(f, "byte") == 0)
        return (m = kw_count(n, "maxLength")) >= 0 ? (uint64_t)m : unbounded;
    if (strcmp(f, "duration") == 0 || strcmp(f, "date-time") == 0)
        return 32; /* MaxDurationSizeJSON, MaxDatetimeSizeJSON */
    if (strcmp(f, "date") == 0)
        return 12; /* JSONDateSize */
    if ((m = kw_count(n, "maxLength")) >= 0)
        return (uint64_t)m * 4;
    const json_t *en = sk_structural_kw(n->raw, "enum");
    if (json_array_size(en) > 0) {
        uint64_t longest = 0;
        size_t i;
        const json_t *v;
        json_array_foreach(en, i, v) if (json_is_string(v) && json_string_length(v) > longest)
            longest = json_string_length(v);
        return longest;
    }
    return unbounded;
}

typedef struct size_ctx {
    const rnode *n;
    int resource;
} size_ctx;

/* kube's sizeEstimator (sk_cel_size_fn): walks the rule's node's type by
 * the path after its variable, whatever that names. */
static int schema_size(void *ctx, const char *const *path, size_t npath, sk_cel_range *out)
{
    const size_ctx *sc = ctx;
    const rnode *n = sc->n;
    int resource = sc->resource;
    /* a type with no node: metadata (0, no elements), a string kube adds
     * there (unbounded), a map's keys (strings of no declared size) */
    int fixed = 0;
    uint64_t fixed_max = 0, meta = 0;
    for (size_t i = 1; i < npath; i++) {
        const char *p = path[i];
        if (fixed && !meta)
            return 0;
        if (strcmp(p, "@items") == 0 || strcmp(p, "@values") == 0) {
            const rnode *el = fixed ? NULL : strcmp(n->type, "array") == 0 ? n->items : n->ap;
            if (!el || n->int_or_string)
                return 0;
            n = el;
            resource = el->embedded;
        } else if (strcmp(p, "@keys") == 0) {
            if (fixed || !n->ap || strcmp(n->type, "object") != 0)
                return 0;
            fixed = 1;
            fixed_max = 0;
        } else if (meta) {
            if (strcmp(p, "name") != 0 && strcmp(p, "generateName") != 0)
                return 0;
            meta = 0;
            fixed_max = MAX_REQUEST_BYTES - 2;
        } else if (resource && (strcmp(p, "apiVersion") == 0 || strcmp(p, "kind") == 0)) {
            fixed = 1;
            fixed_max = MAX_REQUEST_BYTES - 2;
        } else if (resource && strcmp(p, "metadata") == 0) {
            fixed = meta = 1;
            fixed_max = 0;
        } else {
            const rnode *f = NULL;
            if (strcmp(n->type, "object") == 0 && !n->ap && !n->int_or_string)
                for (size_t k = 0; k < n->nprops && !f; k++)
                    if (n->props[k].escaped && strcmp(n->props[k].escaped, p) == 0 &&
                        has_decl_type(n->props[k].n))
                        f = n->props[k].n;
            if (!f)
                return 0;
            n = f;
            resource = f->embedded;
        }
    }
    *out = (sk_cel_range){0, fixed ? fixed_max : max_elements(n)};
    return 1;
}

/* kube names self's type "selfType" and the nanoseconds of the clock when
 * the CRD is compiled (generateUniqueSelfTypeName); a fixed number here,
 * so the messages that show it are stable. */
#define SELF_TYPE_NAME "selfType0"

/* Compiles src, a rule or message expression of node n (resource: a
 * resource's root; optional_old_self: the rule's optionalOldSelf), as
 * kube's compileRule: parsed, type-checked with self and oldSelf of n's
 * type. The checked expression, or NULL with the compile error's detail
 * (without its prefix) in *detail. */
static sk_cel_checked *compile_expr(sk_arena *a, const char *src, const rnode *n, int resource,
                                    const sk_cel_parse_options *opts, int optional_old_self,
                                    sk_buf *detail)
{
    size_t len = strlen(src);
    sk_cel_ast *ast = sk_cel_parse(a, src, len, opts);
    const sk_cel_expr *e = sk_cel_ast_expr(ast);
    if (!e) {
        sk_cel_issues_format(detail, src, len, ast);
        return NULL;
    }
    const sk_cel_ty *self = decl_type(a, n, resource, SELF_TYPE_NAME);
    if (!self)
        self = sk_cel_ty_of(SK_CEL_TY_DYN);
    sk_cel_check_var vars[] = {
        {"self", self},
        {"oldSelf", optional_old_self ? sk_cel_ty_optional(a, self) : self},
    };
    sk_cel_check_env env = {.vars = vars,
                            .nvars = 2,
                            .field = sk_crdrules_field,
                            .cross_type_numeric = 1,
                            .homogeneous_literals = 1,
                            .literal_validators = 1};
    return sk_cel_check(a, e, src, len, &env, detail);
}

/* ---- fieldPath (ValidFieldPath) -------------------------------------------- */

/* Unescapes a single-quoted fieldPath segment into b; -1 on a bad escape. */
static int unquote_segment(const char *s, size_t n, sk_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            sk_buf_putc(b, s[i]);
            continue;
        }
        static const char from[] = "abfnrtv'\\", to[] = "\a\b\f\n\r\t\v'\\";
        const char *f = strchr(from, s[++i]);
        if (!f || !s[i])
            return -1;
        sk_buf_putc(b, to[f - from]);
    }
    return 0;
}

/* The next token of a field path at *p: a delimiter, a quoted string
 * (through its closing quote not after a backslash) or the text up to a
 * delimiter, as kube's bufio.Scanner split function cuts them. */
static size_t next_token(const char *p)
{
    if (*p == '\'') {
        for (size_t i = 1; p[i]; i++)
            if (p[i] == '\'' && p[i - 1] != '\\')
                return i + 1;
        return strlen(p);
    }
    if (*p == '.' || *p == '[' || *p == ']')
        return 1;
    return strcspn(p, ".[]");
}

/* ValidFieldPath: the field.Path string of json path fp from node n
 * (written to out), 0; -1 if it is not a valid path. */
static int valid_field_path(const rnode *n, const char *fp, sk_buf *out)
{
    const char *p = fp;
    int rc = -1;
    sk_buf seg = SK_BUF_INIT;
    while (*p) {
        size_t t = next_token(p);
        int bracket = *p == '[';
        if (!bracket && *p != '.')
            goto out; /* expected [ or . */
        p += t;
        if (!*p)
            goto out;
        t = next_token(p);
        sk_buf_reset(&seg);
        if (bracket) {
            if (t < 2 || p[0] != '\'' || p[t - 1] != '\'' ||
                unquote_segment(p + 1, t - 2, &seg) < 0)
                goto out;
        } else {
            sk_buf_append(&seg, p, t);
        }
        sk_buf_putc(&seg, '\0');
        p += t;
        if (bracket) {
            if (*p != ']')
                goto out;
            p++;
        }
        const char *name = seg.data;
        if (n->has_props) {
            const rnode *next = NULL;
            for (size_t i = 0; i < n->nprops && !next; i++)
                if (strcmp(n->props[i].name, name) == 0)
                    next = n->props[i].n;
            if (!next)
                goto out;
            sk_buf_printf(out, "%s%s", out->len ? "." : "", name);
            n = next;
        } else if (n->ap) {
            sk_buf_printf(out, "[%s]", name);
            n = n->ap;
        } else {
            goto out;
        }
    }
    rc = 0;
out:
    sk_buf_free(&seg);
    return rc;
}

/* ---- building the tree ------------------------------------------------------- */

static rnode *build(sk_arena *a, const json_t *sch, int root, const exprset *pre);
static void normalize_paths(sk_arena *a, rnode *n);

/* Compiles expression src of node n as kube's compileRule does: the tree,
 * or NULL with *error set to prefix + cel-go's errors, or to wrong_type
 * when the result is not of type want (exactly: dyn is not bool). */
static const sk_cel_expr *compile_one(sk_arena *a, const rnode *n, const rule *r, const char *src,
                                      const sk_cel_parse_options *opts, const char *prefix,
                                      sk_cel_ty_kind want, const char *wrong_type,
                                      int *uses_old_self, uint64_t *max_cost, const char **error)
{
    sk_buf detail = SK_BUF_INIT;
    sk_cel_checked *c = compile_expr(a, src, n, n->resource, opts, r->optional_old_self, &detail);
    if (!c) {
        *error = sk_arena_printf(a, "%s%s", prefix, detail.data ? detail.data : "");
    } else if (sk_cel_checked_type(c)->kind != want) {
        *error = wrong_type;
    } else {
        /* kube's estimator: its library's costs over the schema's sizes,
         * presence tests free */
        size_ctx sc = {n, n->resource};
        sk_cel_cost_options opt = {schema_size, &sc, 0};
        *uses_old_self = sk_cel_checked_uses(c, "oldSelf");
        *max_cost = sk_cel_cost(a, c, &opt).max;
    }
    sk_buf_free(&detail);
    return *error ? NULL : sk_cel_checked_expr(c);
}

/* pre: the expressions the stored CRD has, when checking a CRD write (the
 * others are new); NULL when compiling a stored CRD's rules. */
static void build_rules(sk_arena *a, rnode *n, const exprset *pre)
{
    const json_t *list = sk_structural_kw(n->raw, "x-kubernetes-validations");
    n->nrules = json_array_size(list);
    n->rules = n->nrules ? sk_arena_alloc(a, n->nrules * sizeof *n->rules) : NULL;
    for (size_t i = 0; i < n->nrules; i++) {
        const json_t *v = json_array_get(list, i);
        rule *r = &n->rules[i];
        memset(r, 0, sizeof *r);
        r->raw = v;
        r->src = sk_structural_kw_str(v, "rule");
        r->message = sk_arena_trim(a, sk_structural_kw_str(v, "message"));
        r->reason = json_string_value(sk_structural_kw(v, "reason"));
        r->optional_old_self = json_is_true(sk_structural_kw(v, "optionalOldSelf"));
        if (!*sk_arena_trim(a, r->src))
            continue; /* kube compiles nothing for it, runs nothing */
        const sk_cel_parse_options *ropts =
            !pre || in_set(pre->rules, pre->nrules, r->src) ? &stored_opts : &new_opts;
        r->expr = compile_one(a, n, r, r->src, ropts, "compilation failed: ", SK_CEL_TY_BOOL,
                              "cel expression must evaluate to a bool", &r->uses_old_self,
                              &r->max_cost, &r->error);
        r->max_cardinality = MAX_REQUEST_BYTES / (min_size(n) + 1);
        r->ext_fn = r->expr ? ext_function(r->expr) : NULL;
        const char *me = sk_structural_kw_str(v, "messageExpression");
        if (r->expr && *me) {
            int unused = 0;
            r->msg_src = me;
            r->msg_expr = compile_one(
                a, n, r, me, !pre || in_set(pre->msgs, pre->nmsgs, me) ? &stored_opts : &new_opts,
                "messageExpression compilation failed: ", SK_CEL_TY_STRING,
                "messageExpression must evaluate to a string", &unused, &r->msg_max_cost,
                &r->msg_error);
        }
    }
}

static rnode *build(sk_arena *a, const json_t *sch, int root, const exprset *pre)
{
    if (!json_is_object(sch))
        return NULL;
    rnode *n = sk_arena_alloc(a, sizeof *n);
    memset(n, 0, sizeof *n);
    n->raw = sch;
    n->type = sk_structural_kw_str(sch, "type");
    n->nullable = json_is_true(sk_structural_kw(sch, "nullable"));
    n->int_or_string = json_is_true(sk_structural_kw(sch, "x-kubernetes-int-or-string"));
    n->preserve = json_is_true(sk_structural_kw(sch, "x-kubernetes-preserve-unknown-fields"));
    n->embedded = json_is_true(sk_structural_kw(sch, "x-kubernetes-embedded-resource"));
    n->resource = root || n->embedded;
    n->list_type = json_string_value(sk_structural_kw(sch, "x-kubernetes-list-type"));
    n->map_keys = sk_structural_kw(sch, "x-kubernetes-list-map-keys");
    const char *mt = sk_structural_kw_str(sch, "x-kubernetes-map-type");
    n->map_correlatable = !*mt || strcmp(mt, "granular") == 0 || strcmp(mt, "atomic") == 0;
    const json_t *props = sk_structural_kw(sch, "properties");
    if (json_is_object(props)) {
        n->has_props = 1;
        n->props = sk_arena_alloc(a, (json_object_size(props) + 1) * sizeof *n->props);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)props, k, v)
        {
            rnode *c = build(a, v, 0, pre);
            if (!c)
                continue;
            n->props[n->nprops++] = (prop){.name = k, .escaped = escape(a, k), .n = c};
            n->active |= c->active;
        }
    }
    n->ap = build(a, sk_structural_kw(sch, "additionalProperties"), 0, pre);
    n->items = build(a, sk_structural_kw(sch, "items"), 0, pre);
    /* the rules last: their analysis reads the children */
    build_rules(a, n, pre);
    n->active |= n->nrules > 0 || (n->ap && n->ap->active) || (n->items && n->items->active);
    return n;
}

sk_crdrules *sk_crdrules_compile(const json_t *schema)
{
    sk_crdrules *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->a = sk_arena_new();
    c->schema = json_deep_copy(schema);
    c->root = build(c->a, c->schema, 1, NULL);
    if (!c->root || !c->root->active) {
        sk_crdrules_free(c);
        return NULL;
    }
    normalize_paths(c->a, c->root);
    return c;
}

const sk_cel_ty *sk_crdrules_kind_type(sk_arena *a, const json_t *schema, const char *name)
{
    return decl_type(a, build(a, schema, 1, NULL), 1, name);
}

int sk_crdrules_rule_cost(const json_t *schema, size_t i, uint64_t *cost)
{
    sk_arena *a = sk_arena_new();
    const rnode *n = build(a, schema, 0, NULL);
    int rc = -1;
    if (n && i < n->nrules && n->rules[i].expr) {
        *cost = n->rules[i].max_cost;
        rc = 0;
    }
    sk_arena_free(a);
    return rc;
}

void sk_crdrules_free(sk_crdrules *c)
{
    if (!c)
        return;
    sk_arena_free(c->a);
    json_decref(c->schema);
    free(c);
}

/* ---- CRD validation ------------------------------------------------------------ */

static const char *const reasons[] = {"FieldValueDuplicate", "FieldValueForbidden",
                                      "FieldValueInvalid", "FieldValueRequired"};

/* Go's %#v of the internal apiextensions.ValidationRule v, the value kube
 * shows for a rule that does not compile. A set pointer prints as its
 * address in Go; a fixed stand-in here. */
static void go_rule(sk_buf *b, const json_t *v)
{
    sk_buf_puts(b, "apiextensions.ValidationRule{Rule:");
    sk_buf_go_quoted(b, sk_structural_kw_str(v, "rule"));
    sk_buf_puts(b, ", Message:");
    sk_buf_go_quoted(b, sk_structural_kw_str(v, "message"));
    sk_buf_puts(b, ", MessageExpression:");
    sk_buf_go_quoted(b, sk_structural_kw_str(v, "messageExpression"));
    sk_buf_printf(b, ", Reason:(*apiextensions.FieldValueErrorReason)(%s), FieldPath:",
                  sk_structural_kw(v, "reason") ? "0xc000000000" : "nil");
    sk_buf_go_quoted(b, sk_structural_kw_str(v, "fieldPath"));
    sk_buf_printf(b, ", OptionalOldSelf:(*bool)(%s)}",
                  sk_structural_kw(v, "optionalOldSelf") ? "0xc000000001" : "nil");
}

/* An expression's cost among the schema's most expensive (kube's
 * TotalCost.MostExpensive). */
typedef struct rule_cost {
    const char *path;
    uint64_t cost;
} rule_cost;

typedef struct checker {
    sk_arena *a;
    int spare_cost; /* the version's schema is unchanged: no per-expression limit */
    /* the schema's total estimated cost, and its four most expensive
     * expressions of those over 1% of the limit, costliest first */
    uint64_t total;
    rule_cost expensive[5];
    size_t nexpensive;
} checker;

/* TotalCost.ObserveExpressionCost. */
static void observe_cost(checker *ck, const char *path, uint64_t cost)
{
    ck->total = UINT64_MAX - ck->total < cost ? UINT64_MAX : ck->total + cost;
    if (cost < STATIC_CRD_COST_LIMIT / 100)
        return;
    size_t i = ck->nexpensive++;
    for (; i > 0 && ck->expensive[i - 1].cost < cost; i--)
        ck->expensive[i] = ck->expensive[i - 1];
    ck->expensive[i] = (rule_cost){path, cost};
    if (ck->nexpensive > 4)
        ck->nexpensive = 4;
}

/* getCostErrorMessage: Go's %f and %.1f are C's. */
static const char *cost_message(sk_arena *a, const char *what, uint64_t cost, uint64_t limit)
{
    double factor = (double)cost / (double)limit;
    const char *f = factor > 100.0 ? "more than 100x"
                    : factor < 1.5 ? sk_arena_printf(a, "%fx", factor)
                                   : sk_arena_printf(a, "%.1fx", factor);
    return sk_arena_printf(a,
                           "%s exceeds budget by factor of %s (try simplifying the rule, or adding "
                           "maxItems, maxProperties, and maxLength where arrays, maps, and strings "
                           "are declared)",
                           what, f);
}

/* multiplyWithOverflowGuard */
static uint64_t times(uint64_t cost, uint64_t cardinality)
{
    if (cost == 0)
        return 0;
    return UINT64_MAX / cost < cardinality ? UINT64_MAX : cost * cardinality;
}

/* The schema errors of rule i of n (its fields other than the
 * expressions), at schema path at (".../x-kubernetes-validations[i]"). */
static void check_rule_fields(checker *ck, const rnode *n, size_t i, const char *at,
                              sk_field_errors *fe)
{
    const json_t *v = n->rules[i].raw;
    const char *rule_src = sk_structural_kw_str(v, "rule"),
               *msg = sk_structural_kw_str(v, "message");
    const char *t_rule = sk_arena_trim(ck->a, rule_src), *t_msg = sk_arena_trim(ck->a, msg);
    const char *me = sk_structural_kw_str(v, "messageExpression"),
               *fp = sk_structural_kw_str(v, "fieldPath");
#define AT(child) sk_arena_printf(ck->a, "%s.%s", at, child)
    if (!*t_rule)
        sk_field_errors_required(fe, AT("rule"), "rule is not specified");
    else if (*msg && !*t_msg)
        sk_field_errors_invalid(fe, AT("message"), msg, "message must be non-empty if specified");
    else if (strchr(t_msg, '\n'))
        sk_field_errors_invalid(fe, AT("message"), msg, "message must not contain line breaks");
    else if (strchr(t_rule, '\n') && !*t_msg)
        sk_field_errors_required(fe, AT("message"),
                                 "message must be specified if rule contains line breaks");
    if (*me && !*sk_arena_trim(ck->a, me))
        sk_field_errors_required(fe, AT("messageExpression"),
                                 "messageExpression must be non-empty if specified");
    const char *reason = json_string_value(sk_structural_kw(v, "reason"));
    if (reason) {
        int ok = 0;
        for (size_t k = 0; k < sizeof reasons / sizeof *reasons; k++)
            ok |= strcmp(reason, reasons[k]) == 0;
        if (!ok) {
            json_t *val = json_string(reason);
            sk_field_errors_not_supported(fe, AT("reason"), val, reasons,
                                          sizeof reasons / sizeof *reasons);
            json_decref(val);
        }
    }
    if (*fp && !*sk_arena_trim(ck->a, fp))
        sk_field_errors_invalid(fe, AT("fieldPath"), fp,
                                "fieldPath must be non-empty if specified");
    if (strchr(fp, '\n'))
        sk_field_errors_invalid(fe, AT("fieldPath"), fp, "fieldPath must not contain line breaks");
    if (*fp) {
        sk_buf out = SK_BUF_INIT;
        if (valid_field_path(n, fp, &out) < 0)
            sk_field_errors_invalid(fe, AT("fieldPath"), fp, "fieldPath must be a valid path");
        sk_buf_free(&out);
    }
#undef AT
}

/* What compiling rule i of n says (kube's CELErrors for it). forbid_old:
 * the schema path under which oldSelf cannot be used, or NULL. */
static void check_rule_compile(checker *ck, const rnode *n, size_t i, const char *at,
                               const char *forbid_old, const uint64_t *cardinality,
                               sk_field_errors *fe)
{
    const rule *r = &n->rules[i];
    const json_t *v = r->raw;
    const char *f_rule = sk_arena_printf(ck->a, "%s.rule", at);
    const char *f_msg = sk_arena_printf(ck->a, "%s.messageExpression", at);
    sk_buf val = SK_BUF_INIT;
    go_rule(&val, v);
    /* the rule's cost counts once for every value it may run on */
    uint64_t cost = times(r->max_cost, cardinality ? *cardinality : r->max_cardinality);
    if (!ck->spare_cost && cost > STATIC_COST_LIMIT)
        sk_field_errors_forbidden(
            fe, f_rule, cost_message(ck->a, "estimated rule cost", cost, STATIC_COST_LIMIT));
    observe_cost(ck, f_rule, cost);
    if (r->error)
        sk_field_errors_invalid_rendered(fe, f_rule, val.data, r->error);
    if (r->msg_error) {
        sk_field_errors_invalid_rendered(fe, f_msg, val.data, r->msg_error);
    } else if (r->msg_expr) {
        /* kube counts a messageExpression once, whatever the cardinality */
        if (!ck->spare_cost && r->msg_max_cost > STATIC_COST_LIMIT)
            sk_field_errors_forbidden(fe, f_msg,
                                      cost_message(ck->a, "estimated messageExpression cost",
                                                   r->msg_max_cost, STATIC_COST_LIMIT));
        observe_cost(ck, f_msg, r->msg_max_cost);
    }
    if (r->uses_old_self && forbid_old) {
        sk_buf d = SK_BUF_INIT;
        sk_buf_printf(&d,
                      "oldSelf cannot be used on the uncorrelatable portion of the schema "
                      "within %s",
                      forbid_old);
        sk_field_errors_invalid(fe, f_rule, r->src, d.data);
        sk_buf_free(&d);
    } else if (!r->uses_old_self && sk_structural_kw(v, "optionalOldSelf")) {
        sk_field_errors_invalid_rendered(
            fe, sk_arena_printf(ck->a, "%s.optionalOldSelf", at),
            json_is_true(sk_structural_kw(v, "optionalOldSelf")) ? "true" : "false",
            "may not be set if oldSelf is not used in rule");
    }
    sk_buf_free(&val);
}

/* ValidateCustomResourceDefinitionOpenAPISchema's rule part for n at
 * schema path at: children first; a node's rules compile only when there
 * are no schema errors at it or below. Schema errors into sfe, compile
 * errors into cfe (kube lists all schema errors, then all CEL ones).
 * Returns the schema errors found at or below n. */
static size_t check_node(checker *ck, const rnode *n, const char *at, const char *forbid_old,
                         const uint64_t *cardinality, sk_field_errors *sfe, sk_field_errors *cfe)
{
    size_t before = sk_field_errors_count(sfe);
    /* the children's cardinality (kube's childContext): this node's times
     * its maxItems/maxProperties, unbounded (NULL) without them */
    uint64_t child_card = 0;
    const uint64_t *sub = NULL;
    if (cardinality) {
        int64_t m = 1;
        if (strcmp(n->type, "array") == 0)
            m = kw_count(n, "maxItems");
        else if (strcmp(n->type, "object") == 0 && sk_structural_kw(n->raw, "additionalProperties"))
            m = kw_count(n, "maxProperties");
        if (m >= 0) {
            child_card = times(*cardinality, (uint64_t)m);
            sub = &child_card;
        }
    }
    if (n->ap)
        check_node(ck, n->ap, sk_arena_printf(ck->a, "%s.additionalProperties", at), forbid_old,
                   sub, sfe, cfe);
    for (size_t i = 0; i < n->nprops; i++) {
        const char *sub_forbid = forbid_old ? forbid_old : n->map_correlatable ? NULL : at;
        check_node(ck, n->props[i].n,
                   sk_arena_printf(ck->a, "%s.properties[%s]", at, n->props[i].name), sub_forbid,
                   sub, sfe, cfe);
    }
    if (n->items) {
        const char *sub_forbid = forbid_old;
        if (!sub_forbid && (!n->list_type || strcmp(n->list_type, "map") != 0))
            sub_forbid = at;
        check_node(ck, n->items, sk_arena_printf(ck->a, "%s.items", at), sub_forbid, sub, sfe, cfe);
    }
    for (size_t i = 0; i < n->nrules; i++)
        check_rule_fields(ck, n, i,
                          sk_arena_printf(ck->a, "%s.x-kubernetes-validations[%zu]", at, i), sfe);
    if (sk_field_errors_count(sfe) == before)
        for (size_t i = 0; i < n->nrules; i++)
            check_rule_compile(ck, n, i,
                               sk_arena_printf(ck->a, "%s.x-kubernetes-validations[%zu]", at, i),
                               forbid_old, cardinality, cfe);
    return sk_field_errors_count(sfe) - before;
}

/* The openAPIV3Schema of version name in crd, or NULL. */
static const json_t *version_schema(const json_t *crd, const char *name)
{
    size_t i;
    const json_t *ver;
    json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, ver)
    {
        const char *n = json_string_value(json_object_get(ver, "name"));
        if (n && name && strcmp(n, name) == 0)
            return json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
    }
    return NULL;
}

/* Adds to set the rules and message expressions of every
 * x-kubernetes-validations under j (kube's SchemaHas walk; any object
 * counts here). */
static void collect_exprs(sk_arena *a, const json_t *j, exprset *set)
{
    const char *k;
    const json_t *v;
    size_t i;
    if (json_is_array(j)) {
        json_array_foreach(j, i, v) collect_exprs(a, v, set);
        return;
    }
    json_object_foreach((json_t *)j, k, v)
    {
        if (strcmp(k, "x-kubernetes-validations") != 0) {
            collect_exprs(a, v, set);
            continue;
        }
        const json_t *r;
        json_array_foreach(v, i, r)
        {
            const char *rule = json_string_value(json_object_get(r, "rule"));
            const char *me = json_string_value(json_object_get(r, "messageExpression"));
            if (rule) {
                set->rules =
                    sk_arena_grow(a, set->rules, set->nrules, &set->caprules, sizeof *set->rules);
                set->rules[set->nrules++] = rule;
            }
            if (me && *me) {
                set->msgs =
                    sk_arena_grow(a, set->msgs, set->nmsgs, &set->capmsgs, sizeof *set->msgs);
                set->msgs[set->nmsgs++] = me;
            }
        }
    }
}

void sk_crdrules_check_crd(const json_t *crd, const json_t *old, sk_field_errors *fe)
{
    checker ck = {.a = sk_arena_new()};
    sk_field_errors *sfe = sk_field_errors_new(), *cfe = sk_field_errors_new();
    exprset pre = {0};
    if (old)
        collect_exprs(ck.a, json_object_get(old, "spec"), &pre);
    size_t i;
    const json_t *ver;
    json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, ver)
    {
        const json_t *schema = json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
        rnode *root = build(ck.a, schema, 1, &pre);
        if (!root || !root->active)
            continue;
        const char *at = sk_arena_printf(ck.a, "spec.versions[%zu].schema.openAPIV3Schema", i);
        const uint64_t one = 1;
        ck.total = 0;
        ck.nexpensive = 0;
        const json_t *before =
            old ? version_schema(old, json_string_value(json_object_get(ver, "name"))) : NULL;
        ck.spare_cost = before && json_equal((json_t *)before, (json_t *)schema);
        check_node(&ck, root, at, NULL, &one, sfe, cfe);
        /* StaticEstimatedCRDCostLimit: the whole schema's rules together */
        if (ck.total > STATIC_CRD_COST_LIMIT) {
            for (size_t k = 0; k < ck.nexpensive; k++)
                sk_field_errors_forbidden(cfe, ck.expensive[k].path,
                                          "contributed to estimated rule cost total exceeding cost "
                                          "limit for entire OpenAPIv3 schema");
            sk_field_errors_forbidden(
                cfe, at,
                cost_message(ck.a,
                             "x-kubernetes-validations estimated rule cost total for entire "
                             "OpenAPIv3 schema",
                             ck.total, STATIC_CRD_COST_LIMIT));
        }
    }
    sk_field_errors_append(fe, sfe);
    sk_field_errors_append(fe, cfe);
    sk_field_errors_free(sfe);
    sk_field_errors_free(cfe);
    sk_arena_free(ck.a);
}

/* ---- values as kube's CEL sees them -------------------------------------------- */

static const sk_cel_val *to_val(sk_arena *a, const rnode *n, const json_t *j, int resource);

/* An object's fields the schema declares, under their escaped names; at a
 * resource's root (or an embedded resource) apiVersion, kind and metadata
 * as WithTypeAndObjectMeta declares them (metadata: name, generateName). */
static const sk_cel_val *object_val(sk_arena *a, const rnode *n, const json_t *j, int resource)
{
    size_t cap = json_object_size(j) + 3, k = 0;
    const sk_cel_val **keys = sk_arena_alloc(a, cap * sizeof *keys);
    const sk_cel_val **vals = sk_arena_alloc(a, cap * sizeof *vals);
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)j, name, v)
    {
        if (json_is_null(v) || k == cap)
            continue; /* a null field is an absent one */
        const sk_cel_val *cv = NULL;
        const char *key = NULL;
        if (resource && (strcmp(name, "apiVersion") == 0 || strcmp(name, "kind") == 0)) {
            if (!json_is_string(v))
                continue;
            key = name;
            cv = sk_cel_string(a, json_string_value(v), json_string_length(v));
        } else if (resource && strcmp(name, "metadata") == 0) {
            const sk_cel_val **mk = sk_arena_alloc(a, 2 * sizeof *mk);
            const sk_cel_val **mv = sk_arena_alloc(a, 2 * sizeof *mv);
            size_t m = 0;
            static const char *const visible[] = {"name", "generateName"};
            for (size_t i = 0; i < 2; i++) {
                const json_t *s = json_object_get(v, visible[i]);
                if (!json_is_string(s))
                    continue;
                mk[m] = sk_cel_string(a, visible[i], strlen(visible[i]));
                mv[m++] = sk_cel_string(a, json_string_value(s), json_string_length(s));
            }
            key = name;
            cv = sk_cel_map(a, mk, mv, m);
        } else if (n->has_props) {
            for (size_t i = 0; i < n->nprops && !key; i++)
                if (strcmp(n->props[i].name, name) == 0 && n->props[i].escaped) {
                    key = n->props[i].escaped;
                    cv = to_val(a, n->props[i].n, v, n->props[i].n->embedded);
                }
        } else if (n->ap) {
            key = name;
            cv = to_val(a, n->ap, v, n->ap->embedded);
        }
        if (!key)
            continue;
        if (cv->type == SK_CEL_V_ERROR)
            return cv;
        keys[k] = sk_cel_string(a, key, strlen(key));
        vals[k++] = cv;
    }
    return sk_cel_map(a, keys, vals, k);
}

/* A string of format f as kube's CEL sees it (values.go): a date-time or
 * date a timestamp, a duration a duration, a byte string its bytes; NULL
 * for other formats, and for a value in a form this server does not parse
 * (kube's strfmt parsers take a few layouts beyond RFC 3339 and Go's
 * durations, such as "1d" or a date-time without zone): it stays a
 * string, and a rule that needs the typed value meets an evaluator gap
 * rather than an error kube would not give. */
static const sk_cel_val *formatted(sk_arena *a, const char *f, const sk_cel_val *str)
{
    sk_cel_work w = {0};
    const sk_cel_val *v = NULL;
    if (strcmp(f, "date-time") == 0 || strcmp(f, "duration") == 0) {
        /* strfmt tries time.Parse(RFC3339, ...) and time.ParseDuration, as
         * cel-go's timestamp() and duration() do */
        v = sk_cel_time_call(a, f[1] == 'a' ? "timestamp" : "duration", 0, &str, 1, &w);
    } else if (strcmp(f, "date") == 0) {
        const sk_cel_val *day =
            sk_cel_string(a, sk_arena_printf(a, "%sT00:00:00Z", str->u.str.s), str->u.str.len + 10);
        v = str->u.str.len == 10 ? sk_cel_time_call(a, "timestamp", 0, &day, 1, &w) : NULL;
    } else if (strcmp(f, "byte") == 0) {
        size_t n;
        unsigned char *b = sk_typed_base64_decode(str->u.str.s, &n);
        if (b) {
            v = sk_cel_bytes(a, (const char *)b, n);
            free(b);
        }
    }
    return v && v->type != SK_CEL_V_ERROR ? v : NULL;
}

/* UnstructuredToVal: j under node n (resource: the root or an embedded
 * resource). Converted eagerly, so an error anywhere is the whole value's
 * (kube's values are lazy; only pruned, schema-valid objects get here). */
static const sk_cel_val *to_val(sk_arena *a, const rnode *n, const json_t *j, int resource)
{
    if (json_is_null(j))
        return n->nullable ? sk_cel_null()
                           : sk_cel_error(a, "invalid data, got null for schema with "
                                             "nullable=false");
    if (n->int_or_string) {
        if (json_is_integer(j))
            return sk_cel_int(a, json_integer_value(j));
        if (json_is_string(j))
            return sk_cel_string(a, json_string_value(j), json_string_length(j));
        return sk_cel_error(a, "invalid data, expected XIntOrString value to be either a "
                               "string or integer");
    }
    const char *t = n->type;
    if (strcmp(t, "object") == 0) {
        if (!json_is_object(j))
            return sk_cel_error(a, "invalid data, expected a map for the provided schema with "
                                   "type=object");
        return object_val(a, n, j, resource || n->embedded);
    }
    if (strcmp(t, "array") == 0) {
        if (!json_is_array(j))
            return sk_cel_error(a, "invalid data, expected an array for the provided schema "
                                   "with type=array");
        if (!n->items)
            return sk_cel_error(a, "invalid array type, expected Items with a non-empty Schema");
        size_t len = json_array_size(j);
        const sk_cel_val **items = sk_arena_alloc(a, (len + 1) * sizeof *items);
        for (size_t i = 0; i < len; i++) {
            items[i] = to_val(a, n->items, json_array_get(j, i), n->items->embedded);
            if (items[i]->type == SK_CEL_V_ERROR)
                return items[i];
        }
        return sk_cel_list(a, items, len);
    }
    if (strcmp(t, "string") == 0) {
        if (!json_is_string(j))
            return sk_cel_error(a, "invalid data, expected string");
        const sk_cel_val *str = sk_cel_string(a, json_string_value(j), json_string_length(j));
        const sk_cel_val *typed = formatted(a, sk_structural_kw_str(n->raw, "format"), str);
        return typed ? typed : str;
    }
    if (strcmp(t, "number") == 0)
        return json_is_number(j) ? sk_cel_double(a, json_number_value(j))
                                 : sk_cel_error(a, "invalid data, expected float");
    if (strcmp(t, "integer") == 0)
        return json_is_integer(j) ? sk_cel_int(a, json_integer_value(j))
                                  : sk_cel_error(a, "invalid data, expected int");
    if (strcmp(t, "boolean") == 0)
        return json_is_boolean(j) ? sk_cel_bool(json_is_true(j))
                                  : sk_cel_error(a, "invalid data, expected bool");
    if (n->preserve)
        return sk_cel_from_json(a, j);
    return sk_cel_error(a,
                        "invalid type, expected object, array, number, integer, boolean or "
                        "string, or no type with x-kubernetes-int-or-string or "
                        "x-kubernetes-preserve-unknown-fields is true, got %s",
                        t);
}

/* ---- evaluation ------------------------------------------------------------------ */

typedef struct run {
    sk_arena *a;
    sk_field_errors *fe;
    json_t *warnings;
    uint64_t per_call;
    uint64_t remaining;
    uint64_t steps_left; /* the evaluator's own bound over the object */
    int stopped;         /* kube's remainingBudget < 0: no further rules */
    int ratchet;
} run;

typedef struct vars {
    const sk_cel_val *self, *old_self;
} vars;

static const sk_cel_val *resolve(void *ctx, sk_arena *a, const char *name)
{
    (void)a;
    const vars *v = ctx;
    if (strcmp(name, "self") == 0)
        return v->self;
    if (strcmp(name, "oldSelf") == 0)
        return v->old_self;
    return NULL;
}

/* The correlation ratcheting follows: the nearest node whose old value
 * correlates (new and old both there), and its values. */
typedef struct corr {
    const json_t *now, *was; /* NULL: nothing correlates (a create) */
} corr;

static int should_ratchet(const run *r, const corr *c)
{
    return r->ratchet && c->now && c->was && json_equal((json_t *)c->now, (json_t *)c->was);
}

/* Evaluates e under v with the per-call limit and the object's remaining
 * budget: the value, or NULL when a limit stopped it (*why set: 1 the
 * per-call limit, 2 the budget). */
static const sk_cel_val *eval(run *r, const sk_cel_expr *e, vars *v, int *why)
{
    sk_cel_usage used = {0};
    sk_cel_eval_options o = {.resolve = resolve,
                             .resolve_ctx = v,
                             .cost_limit = r->per_call,
                             .optimize = 1,
                             .free_presence_tests = 1,
                             .format_validate = sk_policy_format_validate,
                             .max_steps = r->steps_left ? r->steps_left : 1};
    const sk_cel_val *out = sk_cel_eval(r->a, e, &o, &used);
    r->steps_left -= used.steps < r->steps_left ? used.steps : r->steps_left;
    if (used.cost > r->remaining) {
        *why = 2;
        return NULL;
    }
    r->remaining -= used.cost;
    if (out->type == SK_CEL_V_ERROR && strcmp(out->u.str.s, SK_CEL_COST_EXCEEDED) == 0) {
        *why = 1;
        return NULL;
    }
    return out;
}

/* Whether error msg of rule ru is the evaluator's gap rather than the
 * object's fault: a function it does not have ("no such overload" for an
 * unknown one, "... is not supported yet") in a rule that calls beyond
 * the core. Such a rule is not enforced (a warning says so) rather than
 * refusing objects kube accepts. */
static int gap_error(const rule *ru, const char *msg)
{
    return ru->ext_fn &&
           (strncmp(msg, "no such overload", 16) == 0 || strstr(msg, "is not supported yet") ||
            strncmp(msg, "undeclared reference to", 23) == 0);
}

/* A failed rule's error, or its warning when ratcheted. */
static void add_error(run *r, const rule *ru, const corr *c, const char *field, const char *type,
                      const char *detail, int as_is)
{
    sk_field_errors *fe = r->fe;
    sk_field_errors *one = NULL;
    if (!ru->uses_old_self && should_ratchet(r, c))
        fe = one = sk_field_errors_new();
    const char *reason = as_is ? NULL : ru->reason;
    if (reason && strcmp(reason, "FieldValueForbidden") == 0) {
        sk_field_errors_forbidden(fe, field, detail);
    } else if (reason && strcmp(reason, "FieldValueRequired") == 0) {
        sk_field_errors_required(fe, field, detail);
    } else if (reason && strcmp(reason, "FieldValueDuplicate") == 0) {
        json_t *t = json_string(type);
        sk_field_errors_duplicate(fe, field, t);
        json_decref(t);
    } else {
        sk_field_errors_invalid(fe, field, type, detail);
    }
    if (one) {
        char *m = sk_field_errors_message(one);
        json_array_append_new(r->warnings, json_string(m));
        free(m);
        sk_field_errors_free(one);
    }
}

static const char *rule_error_string(const rule *ru, sk_arena *a)
{
    return *ru->message ? ru->message : sk_arena_trim(a, ru->src);
}

/* The rules of n on value j (old: its correlated old value or NULL) at
 * field path at ("<nil>" at the root). */
static void eval_rules(run *r, const rnode *n, const json_t *j, const json_t *old, const char *at,
                       int resource, const corr *c)
{
    /* opt: the activation of optionalOldSelf rules, oldSelf an optional */
    vars v = {.self = NULL, .old_self = NULL}, opt = v;
    const char *type = n->type;
    /* kube looks at the budget once a node, before its rules */
    if (n->nrules && !r->stopped && r->remaining == 0) {
        sk_field_errors_invalid(r->fe, at, type,
                                "validation failed due to running out of cost budget, no further "
                                "validation rules will be run");
        r->stopped = 1;
        return;
    }
    for (size_t i = 0; i < n->nrules && !r->stopped; i++) {
        const rule *ru = &n->rules[i];
        if (ru->error) {
            /* a rule stored before it was refused (kube's CRD validation
             * lets none through now) */
            sk_field_errors_invalid(r->fe, at, type,
                                    sk_arena_printf(r->a, "rule compile error: %s", ru->error));
            continue;
        }
        /* a transition rule runs only with an old value, unless its
         * oldSelf is optional (none then) */
        if (!ru->expr || (ru->uses_old_self && !old && !ru->optional_old_self))
            continue;
        if (!v.self) {
            v.self = to_val(r->a, n, j, resource);
            if (old)
                v.old_self = to_val(r->a, n, old, resource);
            opt.self = v.self;
            opt.old_self = sk_cel_optional(r->a, v.old_self);
        }
        int why = 0;
        /* (kube evaluates a messageExpression with the plain activation) */
        const sk_cel_val *res = eval(r, ru->expr, ru->optional_old_self ? &opt : &v, &why);
        const char *res_str = rule_error_string(ru, r->a);
        if (!res) {
            if (why == 2)
                sk_field_errors_invalid(r->fe, at, type,
                                        "validation failed due to running out of cost budget, "
                                        "no further validation rules will be run");
            else
                sk_field_errors_invalid(
                    r->fe, at, type,
                    sk_arena_printf(r->a,
                                    "'operation cancelled: actual cost limit exceeded': no "
                                    "further validation rules will be run due to call "
                                    "cost exceeds limit for rule: %s",
                                    res_str));
            r->stopped = 1;
            return;
        }
        if (res->type == SK_CEL_V_ERROR) {
            const char *msg = res->u.str.s;
            if (gap_error(ru, msg)) {
                json_array_append_new(
                    r->warnings,
                    json_string(sk_arena_printf(r->a,
                                                "%s: x-kubernetes-validations rule not enforced "
                                                "by this server (%s): %s",
                                                at, msg, res_str)));
                continue;
            }
            if (strncmp(msg, "no such overload", 16) == 0)
                sk_field_errors_invalid(
                    r->fe, at, type,
                    sk_arena_printf(r->a,
                                    "'%s': call arguments did not match a supported "
                                    "operator, function or macro signature for rule: %s",
                                    msg, res_str));
            else
                sk_field_errors_invalid(
                    r->fe, at, type, sk_arena_printf(r->a, "%s evaluating rule: %s", msg, res_str));
            continue;
        }
        if (res->type == SK_CEL_V_BOOL && res->u.b)
            continue;
        const char *field = at;
        if (ru->field_path)
            field = strcmp(at, "<nil>") == 0 ? ru->field_path
                                             : sk_arena_printf(r->a, "%s.%s", at, ru->field_path);
        const char *fallback =
            *ru->message ? ru->message : sk_arena_printf(r->a, "failed rule: %s", res_str);
        if (!ru->msg_expr) {
            add_error(r, ru, c, field, type, fallback, 0);
            continue;
        }
        const sk_cel_val *m = eval(r, ru->msg_expr, &v, &why);
        if (!m) {
            sk_buf d = SK_BUF_INIT;
            if (why == 2) {
                sk_buf_puts(&d, "messageExpression evaluation failed due to running out of cost "
                                "budget, no further validation rules will be run");
            } else {
                sk_buf_puts(&d, "no further validation rules will be run due to call cost "
                                "exceeds limit for messageExpression: ");
                sk_buf_go_quoted(&d, ru->msg_src);
            }
            add_error(r, ru, c, field, type, d.data, 1);
            sk_buf_free(&d);
            r->stopped = 1;
            return;
        }
        const char *text = m->type == SK_CEL_V_STRING ? sk_arena_trim(r->a, m->u.str.s) : NULL;
        if (!text || !*text || strlen(text) > MAX_MESSAGE_BYTES || strchr(text, '\n'))
            text = fallback;
        add_error(r, ru, c, field, type, text, 0);
    }
}

/* makeMapList(...).Get: the item of old (a list) with the same values of
 * the list's map keys as item, or NULL. */
static const json_t *correlate_item(const rnode *n, const json_t *old, const json_t *item)
{
    if (!n->list_type || strcmp(n->list_type, "map") != 0 || !json_is_array(old) ||
        !json_array_size(n->map_keys) || !json_is_object(item))
        return NULL;
    size_t i, k;
    const json_t *o, *key;
    json_array_foreach(old, i, o)
    {
        int same = json_is_object(o);
        json_array_foreach(n->map_keys, k, key)
        {
            const json_t *x = json_object_get(item, json_string_value(key));
            const json_t *y = json_object_get(o, json_string_value(key));
            same = same && (x == y || (x && y && json_equal((json_t *)x, (json_t *)y)));
        }
        if (same)
            return o;
    }
    return NULL;
}

static void walk(run *r, const rnode *n, const json_t *j, const json_t *old, const char *at,
                 int resource, corr c)
{
    if (!n || !n->active || !j || json_is_null(j) || r->stopped)
        return;
    eval_rules(r, n, j, old, at, resource, &c);
    int root = strcmp(at, "<nil>") == 0;
    if (json_is_array(j) && n->items && n->items->active) {
        size_t i;
        const json_t *item;
        json_array_foreach(j, i, item)
        {
            const json_t *was = correlate_item(n, old, item);
            corr sub = was ? (corr){item, was} : c;
            walk(r, n->items, item, was, sk_arena_printf(r->a, "%s[%zu]", root ? "" : at, i),
                 n->items->embedded, sub);
        }
    } else if (json_is_object(j)) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)j, k, v)
        {
            const json_t *was = n->map_correlatable ? json_object_get(old, k) : NULL;
            const json_t *was_r = json_object_get(old, k); /* ratcheting ignores map-type */
            corr sub = was_r ? (corr){v, was_r} : c;
            if (root && (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0))
                sub = (corr){NULL, NULL};
            if (n->ap)
                walk(r, n->ap, v, was, sk_arena_printf(r->a, "%s[%s]", root ? "" : at, k),
                     n->ap->embedded, sub);
            for (size_t i = 0; i < n->nprops; i++)
                /* a field kube gives no CEL type is left out of CEL
                 * validation entirely, rules below it included */
                if (strcmp(n->props[i].name, k) == 0 && has_decl_type(n->props[i].n))
                    walk(r, n->props[i].n, v, was, root ? k : sk_arena_printf(r->a, "%s.%s", at, k),
                         n->props[i].n->embedded, sub);
        }
    }
}

/* Normalizes every rule's fieldPath (compilation's NormalizedRuleFieldPath). */
static void normalize_paths(sk_arena *a, rnode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nrules; i++) {
        const char *fp = sk_structural_kw_str(n->rules[i].raw, "fieldPath");
        sk_buf out = SK_BUF_INIT;
        if (*fp && valid_field_path(n, fp, &out) == 0 && out.data)
            n->rules[i].field_path = sk_arena_strdup(a, out.data);
        sk_buf_free(&out);
    }
    for (size_t i = 0; i < n->nprops; i++)
        normalize_paths(a, n->props[i].n);
    normalize_paths(a, n->ap);
    normalize_paths(a, n->items);
}

void sk_crdrules_validate(const sk_crdrules *c, const json_t *obj, const json_t *old, int ratchet,
                          const sk_crdrules_limits *lim, sk_field_errors *fe, json_t *warnings)
{
    if (!c)
        return;
    run r = {
        .a = sk_arena_new(),
        .fe = fe,
        .warnings = warnings,
        .per_call = lim && lim->per_call ? lim->per_call : SK_CEL_PER_CALL_LIMIT,
        .remaining = lim && lim->per_object ? lim->per_object : PER_OBJECT_BUDGET,
        .ratchet = ratchet && old,
    };
    r.steps_left = r.remaining * SK_CEL_STEPS_PER_COST;
    walk(&r, c->root, obj, old, "<nil>", 1, (corr){old ? obj : NULL, old});
    sk_arena_free(r.a);
}

/* ---- the per-version cache ------------------------------------------------------ */

static void *make_rules(const json_t *schema)
{
    return sk_crdrules_compile(schema);
}

const sk_crdrules *sk_crdrules_of(const sk_resource *r)
{
    return sk_crschema_form_of(r, SK_CRSCHEMA_RULES, make_rules);
}

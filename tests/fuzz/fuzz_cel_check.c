/*
 * fuzz_cel_check.c - libFuzzer target: the CEL type checker (cel/check.h)
 * and the static cost estimate (cel/cost.h) over whatever parses
 * (cel/parse.h with Kubernetes' syntax), with variables of every kind of
 * type: an object type with fields of each kind (itself among them), a
 * list, a map, an optional, dyn, and sizes known for some paths.
 *
 * Invariants checked: the checker accepts or gives errors, never both
 * (errors text non-empty exactly when it refuses); an accepted expression
 * has a type at its root and at every node under it, with no type
 * parameter left free; checking again gives the same type (the checker is
 * pure); the estimate's min is not above its max.
 */
#include "cel/check.h"
#include "cel/cost.h"
#include "cel/parse.h"
#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int obj_tag = 1;

static const sk_cel_ty *field(void *ctx, sk_arena *a, const sk_cel_ty *object, const char *name)
{
    (void)ctx;
    if (strcmp(name, "s") == 0)
        return sk_cel_ty_of(SK_CEL_TY_STRING);
    if (strcmp(name, "i") == 0)
        return sk_cel_ty_of(SK_CEL_TY_INT);
    if (strcmp(name, "d") == 0)
        return sk_cel_ty_of(SK_CEL_TY_DOUBLE);
    if (strcmp(name, "t") == 0)
        return sk_cel_ty_of(SK_CEL_TY_TIMESTAMP);
    if (strcmp(name, "l") == 0)
        return sk_cel_ty_list(a, sk_cel_ty_object(a, "Obj.l", object->data));
    if (strcmp(name, "m") == 0)
        return sk_cel_ty_map(a, sk_cel_ty_of(SK_CEL_TY_STRING), sk_cel_ty_of(SK_CEL_TY_STRING));
    if (strcmp(name, "o") == 0)
        return sk_cel_ty_object(a, "Obj.o", object->data);
    if (strcmp(name, "x") == 0)
        return sk_cel_ty_of(SK_CEL_TY_DYN);
    return NULL;
}

/* Sizes for paths under self; unknown elsewhere. */
static int size(void *ctx, const char *const *path, size_t n, sk_cel_range *out)
{
    (void)ctx;
    if (n == 0 || strcmp(path[0], "self") != 0)
        return 0;
    *out = (sk_cel_range){0, n * 7};
    return 1;
}

/* Every checked node has a type, except the operands of a select that
 * resolved as one qualified name (net.CIDR, a type) and an optional select's
 * field name: cel-go types only the select, and so does the checker. */
static void all_typed(sk_arena *a, const sk_cel_checked *c, const sk_cel_expr *e)
{
    if (!e)
        return;
    const sk_cel_ty *t = sk_cel_checked_node_type(c, e);
    if (!t || t->kind == SK_CEL_TY_PARAM)
        abort();
    switch (e->kind) {
    case SK_CEL_SELECT: {
        const char *q = sk_cel_qualified_name(a, e);
        if (!q || !sk_cel_checked_uses(c, q))
            all_typed(a, c, e->u.select.operand);
        break;
    }
    case SK_CEL_CALL: {
        /* An optional select's field name (self.?o) is a literal, not an
         * operand: cel-go's checkOptSelect types the call alone. */
        int opt_select = strcmp(e->u.call.function, "_?._") == 0 && !e->u.call.target;
        for (size_t i = 0; i < (opt_select ? 1 : e->u.call.nargs); i++)
            all_typed(a, c, e->u.call.args[i]);
        break;
    }
    case SK_CEL_LIST:
        for (size_t i = 0; i < e->u.list.n; i++)
            all_typed(a, c, e->u.list.elems[i]);
        break;
    case SK_CEL_MAP:
        for (size_t i = 0; i < e->u.obj.n; i++) {
            all_typed(a, c, e->u.obj.entries[i].key);
            all_typed(a, c, e->u.obj.entries[i].value);
        }
        break;
    case SK_CEL_COMPREHENSION:
        all_typed(a, c, e->u.comp.iter_range);
        all_typed(a, c, e->u.comp.loop_step);
        all_typed(a, c, e->u.comp.result);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size_)
{
    sk_arena *a = sk_arena_new();
    sk_cel_parse_options opt = {
        .enable_optional_syntax = 1, .enable_optional_macros = 1, .enable_two_var_macros = 1};
    const char *src = (const char *)data;
    const sk_cel_expr *e = sk_cel_ast_expr(sk_cel_parse(a, src, size_, &opt));
    if (e) {
        const sk_cel_ty *obj = sk_cel_ty_object(a, "Obj", &obj_tag);
        sk_cel_check_var vars[] = {
            {"self", obj},
            {"oldSelf", sk_cel_ty_optional(a, obj)},
            {"list", sk_cel_ty_list(a, sk_cel_ty_of(SK_CEL_TY_INT))},
            {"dyn_var", sk_cel_ty_of(SK_CEL_TY_DYN)},
        };
        sk_cel_check_env env = {vars, 4, field, NULL, 1, 1, 1};
        sk_buf errors = SK_BUF_INIT, again = SK_BUF_INIT;
        sk_cel_checked *c = sk_cel_check(a, e, src, size_, &env, &errors);
        sk_cel_checked *c2 = sk_cel_check(a, e, src, size_, &env, &again);
        if (!c != (errors.len > 0) || !c != !c2)
            abort();
        if (c) {
            sk_buf t1 = SK_BUF_INIT, t2 = SK_BUF_INIT;
            sk_cel_ty_format(&t1, sk_cel_checked_type(c));
            sk_cel_ty_format(&t2, sk_cel_checked_type(c2));
            if (!t1.data || !t2.data || strcmp(t1.data, t2.data) != 0)
                abort();
            sk_buf_free(&t1);
            sk_buf_free(&t2);
            all_typed(a, c, e);
            sk_cel_cost_options co = {size, NULL, 0};
            sk_cel_range r = sk_cel_cost(a, c, &co);
            if (r.min > r.max)
                abort();
        }
        sk_buf_free(&errors);
        sk_buf_free(&again);
    }
    sk_arena_free(a);
    return 0;
}

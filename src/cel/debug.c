/*
 * debug.c - cel-go's debug writer (see debug.h): two-space indents, a
 * line per argument, list element and entry, literals as Go formats them
 * (strconv.Quote for strings and bytes, %v for doubles).
 */
#include "cel/debug.h"

#include "core/utf8.h"

#include <inttypes.h>

typedef struct writer {
    sk_buf *b;
    int indent;
    int line_start;
} writer;

static void put(writer *w, const char *s)
{
    if (w->line_start) {
        w->line_start = 0;
        for (int i = 0; i < w->indent; i++)
            sk_buf_puts(w->b, "  ");
    }
    sk_buf_puts(w->b, s);
}

static void newline(writer *w)
{
    sk_buf_putc(w->b, '\n');
    w->line_start = 1;
}

static const char *adornment(const sk_cel_expr *e)
{
    static const char *const consts[] = {
        [SK_CEL_NULL] = "^#*expr.Constant_NullValue#",
        [SK_CEL_BOOL] = "^#*expr.Constant_BoolValue#",
        [SK_CEL_INT] = "^#*expr.Constant_Int64Value#",
        [SK_CEL_UINT] = "^#*expr.Constant_Uint64Value#",
        [SK_CEL_DOUBLE] = "^#*expr.Constant_DoubleValue#",
        [SK_CEL_STRING] = "^#*expr.Constant_StringValue#",
        [SK_CEL_BYTES] = "^#*expr.Constant_BytesValue#",
    };
    static const char *const kinds[] = {
        [SK_CEL_IDENT] = "^#*expr.Expr_IdentExpr#",
        [SK_CEL_SELECT] = "^#*expr.Expr_SelectExpr#",
        [SK_CEL_CALL] = "^#*expr.Expr_CallExpr#",
        [SK_CEL_LIST] = "^#*expr.Expr_ListExpr#",
        [SK_CEL_MAP] = "^#*expr.Expr_StructExpr#",
        [SK_CEL_STRUCT] = "^#*expr.Expr_StructExpr#",
        [SK_CEL_COMPREHENSION] = "^#*expr.Expr_ComprehensionExpr#",
        [SK_CEL_ERROR_NODE] = "^#*expr.Expr#",
    };
    return e->kind == SK_CEL_CONST ? consts[e->u.lit.kind] : kinds[e->kind];
}

static void literal(writer *w, const sk_cel_expr *e)
{
    sk_buf lit = SK_BUF_INIT;
    switch (e->u.lit.kind) {
    case SK_CEL_NULL:
        sk_buf_puts(&lit, "null");
        break;
    case SK_CEL_BOOL:
        sk_buf_puts(&lit, e->u.lit.b ? "true" : "false");
        break;
    case SK_CEL_INT:
        sk_buf_printf(&lit, "%" PRId64, e->u.lit.i);
        break;
    case SK_CEL_UINT:
        sk_buf_printf(&lit, "%" PRIu64 "u", e->u.lit.u);
        break;
    case SK_CEL_DOUBLE:
        sk_buf_go_float(&lit, e->u.lit.d);
        break;
    case SK_CEL_BYTES:
        sk_buf_putc(&lit, 'b');
        sk_utf8_go_quote(&lit, e->u.lit.s, e->u.lit.len);
        break;
    case SK_CEL_STRING:
        sk_utf8_go_quote(&lit, e->u.lit.s, e->u.lit.len);
        break;
    }
    put(w, lit.data);
    sk_buf_free(&lit);
}

static void expr(writer *w, const sk_cel_expr *e);

/* The items of a call, list or object: one a line, indented. */
static void call(writer *w, const sk_cel_expr *e)
{
    if (e->u.call.target) {
        expr(w, e->u.call.target);
        put(w, ".");
    }
    put(w, e->u.call.function);
    put(w, "(");
    if (e->u.call.nargs > 0) {
        w->indent++;
        newline(w);
        for (size_t i = 0; i < e->u.call.nargs; i++) {
            if (i > 0) {
                put(w, ",");
                newline(w);
            }
            expr(w, e->u.call.args[i]);
        }
        w->indent--;
        newline(w);
    }
    put(w, ")");
}

static void list(writer *w, const sk_cel_expr *e)
{
    put(w, "[");
    if (e->u.list.n > 0) {
        newline(w);
        w->indent++;
        for (size_t i = 0; i < e->u.list.n; i++) {
            if (i > 0) {
                put(w, ",");
                newline(w);
            }
            expr(w, e->u.list.elems[i]);
        }
        w->indent--;
        newline(w);
    }
    put(w, "]");
}

static void object(writer *w, const sk_cel_expr *e)
{
    if (e->u.obj.message)
        put(w, e->u.obj.message);
    put(w, "{");
    if (e->u.obj.n > 0) {
        newline(w);
        w->indent++;
        for (size_t i = 0; i < e->u.obj.n; i++) {
            const sk_cel_entry *en = &e->u.obj.entries[i];
            if (i > 0) {
                put(w, ",");
                newline(w);
            }
            if (en->optional)
                put(w, "?");
            if (e->u.obj.message)
                put(w, en->field);
            else
                expr(w, en->key);
            put(w, ":");
            expr(w, en->value);
            put(w, "^#*expr.Expr_CreateStruct_Entry#");
        }
        w->indent--;
        newline(w);
    }
    put(w, "}");
}

static void comprehension(writer *w, const sk_cel_expr *e)
{
    const struct {
        const char *label;
        const char *name;
        const sk_cel_expr *e;
    } parts[] = {
        {"// Variable", e->u.comp.iter_var, NULL},       {"// Target", NULL, e->u.comp.iter_range},
        {"// Accumulator", e->u.comp.accu_var, NULL},    {"// Init", NULL, e->u.comp.accu_init},
        {"// LoopCondition", NULL, e->u.comp.loop_cond}, {"// LoopStep", NULL, e->u.comp.loop_step},
        {"// Result", NULL, e->u.comp.result},
    };
    put(w, "__comprehension__(");
    w->indent++;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        newline(w);
        put(w, parts[i].label);
        newline(w);
        if (parts[i].name)
            put(w, parts[i].name);
        else
            expr(w, parts[i].e);
        if (i + 1 < sizeof parts / sizeof parts[0])
            put(w, ",");
        if (i == 0 && e->u.comp.iter_var2) { /* cel-go writes it under the first */
            newline(w);
            put(w, e->u.comp.iter_var2);
            put(w, ",");
        }
    }
    put(w, ")");
    w->indent--;
}

static void expr(writer *w, const sk_cel_expr *e)
{
    switch (e->kind) {
    case SK_CEL_CONST:
        literal(w, e);
        break;
    case SK_CEL_IDENT:
        put(w, e->u.ident);
        break;
    case SK_CEL_SELECT:
        expr(w, e->u.select.operand);
        put(w, ".");
        put(w, e->u.select.field);
        if (e->u.select.test_only)
            put(w, "~test-only~");
        break;
    case SK_CEL_CALL:
        call(w, e);
        break;
    case SK_CEL_LIST:
        list(w, e);
        break;
    case SK_CEL_MAP:
    case SK_CEL_STRUCT:
        object(w, e);
        break;
    case SK_CEL_COMPREHENSION:
        comprehension(w, e);
        break;
    case SK_CEL_ERROR_NODE:
        break;
    }
    put(w, adornment(e));
}

void sk_cel_debug_string(sk_buf *b, const sk_cel_expr *e)
{
    writer w = {b, 0, 0};
    expr(&w, e);
}

/*
 * types.h - CEL types as cel-go's checker has them (common/types.Type):
 * the primitives, list, map, type, opaque types (optional_type, net.IP),
 * object types and type parameters. Plain immutable data, like the tree
 * (ast.h), made by the constructors below; the type checker (check.h)
 * reads them, and its declarations (check_decls.h) are written in them.
 */
#ifndef SK_CEL_TYPES_H
#define SK_CEL_TYPES_H

#include "core/arena.h"
#include "core/buf.h"

#include <stddef.h>

typedef enum sk_cel_ty_kind {
    SK_CEL_TY_DYN,
    SK_CEL_TY_ERROR,
    SK_CEL_TY_NULL,
    SK_CEL_TY_BOOL,
    SK_CEL_TY_INT,
    SK_CEL_TY_UINT,
    SK_CEL_TY_DOUBLE,
    SK_CEL_TY_STRING,
    SK_CEL_TY_BYTES,
    SK_CEL_TY_DURATION,
    SK_CEL_TY_TIMESTAMP,
    SK_CEL_TY_LIST,   /* p[0]: the element type */
    SK_CEL_TY_MAP,    /* p[0], p[1]: key and value types */
    SK_CEL_TY_TYPE,   /* p[0]: the type it denotes; np 0: `type` itself */
    SK_CEL_TY_OPAQUE, /* name; optional_type has p[0] */
    SK_CEL_TY_OBJECT, /* name; data for the field callback */
    SK_CEL_TY_PARAM,  /* a type parameter (name), resolved while checking */
} sk_cel_ty_kind;

typedef struct sk_cel_ty sk_cel_ty;
struct sk_cel_ty {
    sk_cel_ty_kind kind;
    const char *name; /* OPAQUE, OBJECT, PARAM */
    const sk_cel_ty *p[2];
    size_t np;
    const void *data; /* OBJECT: the maker's (see sk_cel_check_field_fn) */
};

/* The types of no parameters (static). */
const sk_cel_ty *sk_cel_ty_of(sk_cel_ty_kind kind);
/* New types in a; every pointer is borrowed and must outlive a. */
const sk_cel_ty *sk_cel_ty_list(sk_arena *a, const sk_cel_ty *elem);
const sk_cel_ty *sk_cel_ty_map(sk_arena *a, const sk_cel_ty *key, const sk_cel_ty *val);
const sk_cel_ty *sk_cel_ty_optional(sk_arena *a, const sk_cel_ty *t);
const sk_cel_ty *sk_cel_ty_object(sk_arena *a, const char *name, const void *data);

/* cel-go's FormatCELType: "int", "list(string)", "map(string, dyn)",
 * "optional_type(int)", an object's name; appended to b. */
void sk_cel_ty_format(sk_buf *b, const sk_cel_ty *t);

/* cel-go's Type.String(): as sk_cel_ty_format, but every type by its
 * TypeName ("null_type", "google.protobuf.Duration", "list(dyn)"), as
 * kube quotes a result type; appended to b. */
void sk_cel_ty_string(sk_buf *b, const sk_cel_ty *t);

/* cel-go's TypeName: "int", "list", "google.protobuf.Duration", an opaque
 * or object type's name, a parameter's name. */
const char *sk_cel_ty_name(const sk_cel_ty *t);

#endif

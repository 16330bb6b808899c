/*
 * value.h - CEL runtime values (cel-spec doc/langdef.md "Values"): null,
 * bool, int (int64), uint (uint64), double, string, bytes, list, map, type,
 * duration and timestamp (time.c), optional, the opaque values of the
 * libraries (lib.h: kubernetes.URL, net.IP, ...; authz.h's checks), and
 * errors, which CEL treats as values (a failed index is an error value
 * that `false && ...` can still absorb).
 *
 * Like the expression nodes (ast.h) the struct is public: every part of the
 * evaluator reads it, it is immutable once made (list concatenation writes
 * only into storage past the end of every list that shares it), and a
 * value is nothing but its shape. Values live in the caller's sk_arena and borrow everything
 * handed to their constructors (strings, item arrays), which must live at
 * least as long; nothing is freed on its own.
 *
 * Invariants: a list's items and a map's keys and values are never errors
 * (building one from an error gives the error instead); map keys are bool,
 * int, uint or string and pairwise unequal under CEL equality (1 and 1u are
 * the same key); strings are UTF-8 (not checked here: the lexer and JSON
 * give UTF-8), may hold NUL, and are NUL-terminated too.
 *
 * Maps are arrays searched linearly: most maps CEL meets in Kubernetes are
 * objects of tens of fields, and a hash would cost more to build than the
 * few lookups a rule makes; a big map (a ConfigMap's data) costs its size
 * a lookup, which the evaluator's step bound charges (sk_cel_work).
 */
#ifndef SK_CEL_VALUE_H
#define SK_CEL_VALUE_H

#include "core/arena.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sk_cel_vtype {
    SK_CEL_V_NULL,
    SK_CEL_V_BOOL,
    SK_CEL_V_INT,
    SK_CEL_V_UINT,
    SK_CEL_V_DOUBLE,
    SK_CEL_V_STRING,
    SK_CEL_V_BYTES,
    SK_CEL_V_LIST,
    SK_CEL_V_MAP,
    SK_CEL_V_TYPE,  /* a type as a value: type(1), int; its name in str */
    SK_CEL_V_ERROR, /* its message in str */
    /* time.sec and time.nsec: seconds (since the Unix epoch for a
     * timestamp) and nanoseconds in [0, 1e9), floored (-1ns is -1 s and
     * 999999999 ns), so each value has one spelling; ranges in time.h.
     * A timestamp's time.off is the UTC offset it was written with
     * (seconds east), which only its text shows: cel-go keeps Go's
     * time.Time location, so string() of '...+01:00' ends in +01:00;
     * equality and order are of the instant. */
    SK_CEL_V_DURATION,
    SK_CEL_V_TIMESTAMP,
    SK_CEL_V_OPTIONAL, /* opt: the value, or NULL for optional.none() */
    SK_CEL_V_OPAQUE,   /* a library's value (kubernetes.URL, net.IP, ...): opaque */
} sk_cel_vtype;

typedef struct sk_cel_val sk_cel_val;

/* A kind of value a library (lib.h) makes: the name type() gives it, its
 * equality (1 or 0; both values of this kind) and the bytes equality may
 * compare of a value, which sk_cel_equal charges as it charges strings,
 * and the size the runtime cost (eval.h) reads.
 * Values of different kinds are unequal and no kind is ordered. */
typedef struct sk_cel_opaque_type {
    const char *name;
    int (*equal)(const void *x, const void *y);
    size_t (*size)(const void *x);
    /* The size cel-go's runtime cost sees (its traits.Sizer: an IP's
     * bytes, a CIDR's prefix bytes); NULL: not sized, 1. */
    uint64_t (*cost_size)(const void *x);
} sk_cel_opaque_type;

struct sk_cel_val {
    sk_cel_vtype type;
    union {
        int b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const char *s;
            size_t len;
        } str;
        struct {
            const sk_cel_val *const *items;
            size_t n;
            /* Room after items that sk_cel_list_concat may fill, or NULL. */
            struct sk_cel_listbuf *buf;
        } list;
        struct {
            const sk_cel_val *const *keys;
            const sk_cel_val *const *vals;
            size_t n;
        } map;
        struct {
            int64_t sec;
            int32_t nsec;
            int32_t off;
        } time;
        const sk_cel_val *opt;
        struct {
            const sk_cel_opaque_type *type;
            const void *data; /* the library's, in the arena */
        } opaque;
    } u;
};

/* Constructors: a new value in a, never NULL; pointer arguments borrowed. */
const sk_cel_val *sk_cel_null(void);
const sk_cel_val *sk_cel_bool(int b);
sk_cel_val *sk_cel_int(sk_arena *a, int64_t i);
sk_cel_val *sk_cel_uint(sk_arena *a, uint64_t u);
sk_cel_val *sk_cel_double(sk_arena *a, double d);
/* s: len bytes, NUL-terminated after them. */
sk_cel_val *sk_cel_string(sk_arena *a, const char *s, size_t len);
sk_cel_val *sk_cel_bytes(sk_arena *a, const char *s, size_t len);
/* items: n non-error values. */
sk_cel_val *sk_cel_list(sk_arena *a, const sk_cel_val *const *items, size_t n);
/* keys, vals: n each; keys valid and distinct (see above). */
sk_cel_val *sk_cel_map(sk_arena *a, const sk_cel_val *const *keys, const sk_cel_val *const *vals,
                       size_t n);
/* x + y (two lists) as a new list, copying as Go's append does: when x
 * ends where its storage's filled part ends and there is room, y's items
 * go after x's in place (x still sees only its own n), else both are
 * copied into storage with room for as many again. So a comprehension's
 * `@result + [e]` costs amortized O(1) an iteration instead of copying the
 * list each time (a map() over 15,000 items took 3 s and 470 MB). *copied
 * is set to the items copied, for the caller's cost count. */
sk_cel_val *sk_cel_list_concat(sk_arena *a, const sk_cel_val *x, const sk_cel_val *y,
                               size_t *copied);
/* sec, nsec: normalized as above; the range is the caller's to check; a
 * timestamp's offset is 0 (UTC). */
sk_cel_val *sk_cel_duration(sk_arena *a, int64_t sec, int32_t nsec);
sk_cel_val *sk_cel_timestamp(sk_arena *a, int64_t sec, int32_t nsec);
/* v: a non-error value, or NULL for optional.none(). */
sk_cel_val *sk_cel_optional(sk_arena *a, const sk_cel_val *v);
/* name: a type's name as type() gives it ("int", "list", "null_type"). */
sk_cel_val *sk_cel_type(sk_arena *a, const char *name);
sk_cel_val *sk_cel_error(sk_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* data: borrowed, the kind's own representation. */
sk_cel_val *sk_cel_opaque(sk_arena *a, const sk_cel_opaque_type *type, const void *data);

/* The finite double d in the shortest decimal that reads back as it, as
 * Go's strconv.FormatFloat(d, fmt, -1, 64) writes it: fmt 'g' (exponent
 * form below 1e-4 and from 1e21: "1e+21", "1.5") or 'f' (always plain:
 * "0.000000001"). Writes out (NUL-terminated; 400 bytes hold any double
 * in 'f') and returns the length. */
size_t sk_cel_double_text(double d, char fmt, char out[400]);
/* string(d) as cel-go has it: 'g' above, and "NaN", "+Inf", "-Inf". */
const sk_cel_val *sk_cel_double_string(sk_arena *a, double d);

/* A JSON value (borrowed; must outlive a) as CEL sees a Kubernetes object:
 * objects are maps with string keys, arrays lists, integers int, reals
 * double. Converted whole, so the result borrows only j's strings. */
const sk_cel_val *sk_cel_from_json(sk_arena *a, const json_t *j);

/* name itself (static) if it names a type as an identifier or a dotted
 * name does (int, list, null_type, google.protobuf.Duration, net.IP, ...:
 * what an unbound name evaluates to), else NULL. */
const char *sk_cel_type_named(const char *name);

/* The name type(v) has: "int", "map", ...; for an error "error". */
const char *sk_cel_type_name(const sk_cel_val *v);

/* The work equality and map lookup do, for a caller's cost bound: done
 * grows by one for each value compared and for each 64 bytes of strings or
 * bytes compared; once it passes limit they stop (see below). */
typedef struct sk_cel_work {
    uint64_t done, limit;
} sk_cel_work;

/* CEL equality (cel-go's heterogeneous form): numbers compare by value
 * across int, uint and double (NaN equals nothing); lists and maps
 * elementwise; values of different kinds are unequal. Neither an error.
 * Returns 1 or 0, or -1 once w (NULL: unbounded) passed its limit. */
int sk_cel_equal(const sk_cel_val *x, const sk_cel_val *y, sk_cel_work *w);

/* Ordering of two numbers (any mix of int, uint, double), two strings
 * (bytewise, which is code point order in UTF-8), two bytes, two bools,
 * two durations or two timestamps:
 * returns 1 with *cmp -1, 0 or 1, 0 if they are unordered (a NaN), or -1
 * if the pair has no ordering (leaving *cmp alone). */
int sk_cel_compare(const sk_cel_val *x, const sk_cel_val *y, int *cmp);

/* The index of the entry of map m whose key equals key (CEL equality, so
 * 1, 1u and 1.0 find the same entry), -1 if none, -2 once w (NULL:
 * unbounded) passed its limit. */
long sk_cel_map_find(const sk_cel_val *m, const sk_cel_val *key, sk_cel_work *w);

#endif

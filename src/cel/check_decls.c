/*
 * check_decls.c - see check_decls.h.
 *
 * The declarations are written as signatures, one overload a line, and
 * parsed once into types (pthread_once; process lifetime): "int,int>int"
 * is a function of two ints giving an int, a leading '.' makes it a method
 * (the receiver first), a leading '~' marks cel-go's cross-type numeric
 * comparisons, which its environment filters out unless
 * CrossTypeNumericComparisons is set. In a signature a single capital
 * letter is a type parameter, '#name' an object type (cel.ObjectType:
 * kubernetes.URL, kubernetes.Quantity, the authorizer's), any other
 * unknown name an opaque type (net.IP). Sources: cel-go v0.22
 * common/stdlib/standard.go, cel/library.go (optionals), ext/strings.go
 * (version 2), ext/sets.go, ext/comprehensions.go; k8s.io/apiserver 1.32
 * pkg/cel/library (urls, regex, lists, authz, quantity, ip, cidr, format),
 * in the order Kubernetes' base environment adds them.
 */
#include "cel/check_decls.h"
#include "cel/lib_format.h"
#include "core/check.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct decl {
    const char *function, *sig;
} decl;

#define CMP(op)                                                                                    \
    {op, "bool,bool>bool"}, {op, "int,int>bool"}, {op, "~int,double>bool"},                        \
        {op, "~int,uint>bool"}, {op, "uint,uint>bool"}, {op, "~uint,double>bool"},                 \
        {op, "~uint,int>bool"}, {op, "double,double>bool"}, {op, "~double,int>bool"},              \
        {op, "~double,uint>bool"}, {op, "string,string>bool"}, {op, "bytes,bytes>bool"},           \
        {op, "timestamp,timestamp>bool"},                                                          \
    {                                                                                              \
        op, "duration,duration>bool"                                                               \
    }
#define TIME(f)                                                                                    \
    {f, ".timestamp>int"},                                                                         \
    {                                                                                              \
        f, ".timestamp,string>int"                                                                 \
    }
#define TIME_D(f)                                                                                  \
    TIME(f),                                                                                       \
    {                                                                                              \
        f, ".duration>int"                                                                         \
    }
#define COMPARABLE(f, sig)                                                                         \
    {f, "." sig("int")}, {f, "." sig("uint")}, {f, "." sig("double")}, {f, "." sig("bool")},       \
        {f, "." sig("duration")}, {f, "." sig("timestamp")}, {f, "." sig("string")},               \
    {                                                                                              \
        f, "." sig("bytes")                                                                        \
    }
#define SORTED(t) "list(" t ")>bool"
#define SAME(t) "list(" t ")>" t
#define FORMAT(n, regex_size) {"format." #n, ">#kubernetes.NamedFormat"},

static const decl decls[] = {
    /* cel-go's standard library */
    {"_?_:_", "bool,A,A>A"},
    {"_&&_", "bool,bool>bool"},
    {"_||_", "bool,bool>bool"},
    {"!_", "bool>bool"},
    {"@not_strictly_false", "bool>bool"},
    {"_==_", "A,A>bool"},
    {"_!=_", "A,A>bool"},
    {"_+_", "bytes,bytes>bytes"},
    {"_+_", "double,double>double"},
    {"_+_", "duration,duration>duration"},
    {"_+_", "duration,timestamp>timestamp"},
    {"_+_", "timestamp,duration>timestamp"},
    {"_+_", "int,int>int"},
    {"_+_", "list(A),list(A)>list(A)"},
    {"_+_", "string,string>string"},
    {"_+_", "uint,uint>uint"},
    {"_/_", "double,double>double"},
    {"_/_", "int,int>int"},
    {"_/_", "uint,uint>uint"},
    {"_%_", "int,int>int"},
    {"_%_", "uint,uint>uint"},
    {"_*_", "double,double>double"},
    {"_*_", "int,int>int"},
    {"_*_", "uint,uint>uint"},
    {"-_", "double>double"},
    {"-_", "int>int"},
    {"_-_", "double,double>double"},
    {"_-_", "duration,duration>duration"},
    {"_-_", "int,int>int"},
    {"_-_", "timestamp,duration>timestamp"},
    {"_-_", "timestamp,timestamp>duration"},
    {"_-_", "uint,uint>uint"},
    CMP("_<_"),
    CMP("_<=_"),
    CMP("_>_"),
    CMP("_>=_"),
    {"_[_]", "list(A),int>A"},
    {"_[_]", "map(A,B),A>B"},
    {"@in", "A,list(A)>bool"},
    {"@in", "A,map(A,B)>bool"},
    {"size", "bytes>int"},
    {"size", ".bytes>int"},
    {"size", "list(A)>int"},
    {"size", ".list(A)>int"},
    {"size", "map(A,B)>int"},
    {"size", ".map(A,B)>int"},
    {"size", "string>int"},
    {"size", ".string>int"},
    {"type", "A>type(A)"},
    {"bool", "bool>bool"},
    {"bool", "string>bool"},
    {"bytes", "bytes>bytes"},
    {"bytes", "string>bytes"},
    {"double", "double>double"},
    {"double", "int>double"},
    {"double", "string>double"},
    {"double", "uint>double"},
    {"duration", "duration>duration"},
    {"duration", "int>duration"},
    {"duration", "string>duration"},
    {"dyn", "A>dyn"},
    {"int", "int>int"},
    {"int", "double>int"},
    {"int", "duration>int"},
    {"int", "string>int"},
    {"int", "timestamp>int"},
    {"int", "uint>int"},
    {"string", "string>string"},
    {"string", "bool>string"},
    {"string", "bytes>string"},
    {"string", "double>string"},
    {"string", "duration>string"},
    {"string", "int>string"},
    {"string", "timestamp>string"},
    {"string", "uint>string"},
    {"timestamp", "timestamp>timestamp"},
    {"timestamp", "int>timestamp"},
    {"timestamp", "string>timestamp"},
    {"uint", "uint>uint"},
    {"uint", "double>uint"},
    {"uint", "int>uint"},
    {"uint", "string>uint"},
    {"contains", ".string,string>bool"},
    {"endsWith", ".string,string>bool"},
    {"startsWith", ".string,string>bool"},
    {"matches", "string,string>bool"},
    {"matches", ".string,string>bool"},
    TIME("getFullYear"),
    TIME("getMonth"),
    TIME("getDayOfYear"),
    TIME("getDayOfMonth"),
    TIME("getDate"),
    TIME("getDayOfWeek"),
    TIME_D("getHours"),
    TIME_D("getMinutes"),
    TIME_D("getSeconds"),
    TIME_D("getMilliseconds"),
    /* k8s.io/apiserver's URLs, Regex and Lists (Kubernetes 1.0) */
    {"url", "string>#kubernetes.URL"},
    {"getScheme", ".#kubernetes.URL>string"},
    {"getHost", ".#kubernetes.URL>string"},
    {"getHostname", ".#kubernetes.URL>string"},
    {"getPort", ".#kubernetes.URL>string"},
    {"getEscapedPath", ".#kubernetes.URL>string"},
    {"getQuery", ".#kubernetes.URL>map(string,list(string))"},
    {"isURL", "string>bool"},
    {"find", ".string,string>string"},
    {"findAll", ".string,string>list(string)"},
    {"findAll", ".string,string,int>list(string)"},
    COMPARABLE("isSorted", SORTED),
    {"sum", ".list(int)>int"},
    {"sum", ".list(uint)>uint"},
    {"sum", ".list(double)>double"},
    {"sum", ".list(duration)>duration"},
    COMPARABLE("max", SAME),
    COMPARABLE("min", SAME),
    {"indexOf", ".list(A),A>int"},
    {"lastIndexOf", ".list(A),A>int"},
    /* Authz (1.27) */
    {"path", ".#kubernetes.authorization.Authorizer,string>#kubernetes.authorization.PathCheck"},
    {"group", ".#kubernetes.authorization.Authorizer,string>#kubernetes.authorization.GroupCheck"},
    {"serviceAccount",
     ".#kubernetes.authorization.Authorizer,string,string>#kubernetes.authorization.Authorizer"},
    {"resource",
     ".#kubernetes.authorization.GroupCheck,string>#kubernetes.authorization.ResourceCheck"},
    {"subresource",
     ".#kubernetes.authorization.ResourceCheck,string>#kubernetes.authorization.ResourceCheck"},
    {"namespace",
     ".#kubernetes.authorization.ResourceCheck,string>#kubernetes.authorization.ResourceCheck"},
    {"name",
     ".#kubernetes.authorization.ResourceCheck,string>#kubernetes.authorization.ResourceCheck"},
    {"check", ".#kubernetes.authorization.PathCheck,string>#kubernetes.authorization.Decision"},
    {"check", ".#kubernetes.authorization.ResourceCheck,string>#kubernetes.authorization.Decision"},
    {"errored", ".#kubernetes.authorization.Decision>bool"},
    {"error", ".#kubernetes.authorization.Decision>string"},
    {"allowed", ".#kubernetes.authorization.Decision>bool"},
    {"reason", ".#kubernetes.authorization.Decision>string"},
    /* optional types (1.28) */
    {"optional.of", "V>optional_type(V)"},
    {"optional.ofNonZeroValue", "V>optional_type(V)"},
    {"optional.none", ">optional_type(V)"},
    {"value", ".optional_type(V)>V"},
    {"hasValue", ".optional_type(V)>bool"},
    {"or", ".optional_type(V),optional_type(V)>optional_type(V)"},
    {"orValue", ".optional_type(V),V>V"},
    {"_?._", "dyn,string>optional_type(V)"},
    {"_[?_]", "list(V),int>optional_type(V)"},
    {"_[?_]", "optional_type(list(V)),int>optional_type(V)"},
    {"_[?_]", "map(K,V),K>optional_type(V)"},
    {"_[?_]", "optional_type(map(K,V)),K>optional_type(V)"},
    {"_[_]", "optional_type(list(V)),int>optional_type(V)"},
    {"_[_]", "optional_type(map(K,V)),K>optional_type(V)"},
    /* Quantity (1.28) */
    {"quantity", "string>#kubernetes.Quantity"},
    {"isQuantity", "string>bool"},
    {"sign", "#kubernetes.Quantity>int"},
    {"isGreaterThan", ".#kubernetes.Quantity,#kubernetes.Quantity>bool"},
    {"isLessThan", ".#kubernetes.Quantity,#kubernetes.Quantity>bool"},
    {"compareTo", ".#kubernetes.Quantity,#kubernetes.Quantity>int"},
    {"asApproximateFloat", ".#kubernetes.Quantity>double"},
    {"asInteger", ".#kubernetes.Quantity>int"},
    {"isInteger", ".#kubernetes.Quantity>bool"},
    {"add", ".#kubernetes.Quantity,#kubernetes.Quantity>#kubernetes.Quantity"},
    {"add", ".#kubernetes.Quantity,int>#kubernetes.Quantity"},
    {"sub", ".#kubernetes.Quantity,#kubernetes.Quantity>#kubernetes.Quantity"},
    {"sub", ".#kubernetes.Quantity,int>#kubernetes.Quantity"},
    /* the strings extension, version 2 (1.29) */
    {"charAt", ".string,int>string"},
    {"indexOf", ".string,string>int"},
    {"indexOf", ".string,string,int>int"},
    {"lastIndexOf", ".string,string>int"},
    {"lastIndexOf", ".string,string,int>int"},
    {"lowerAscii", ".string>string"},
    {"replace", ".string,string,string>string"},
    {"replace", ".string,string,string,int>string"},
    {"split", ".string,string>list(string)"},
    {"split", ".string,string,int>list(string)"},
    {"substring", ".string,int>string"},
    {"substring", ".string,int,int>string"},
    {"trim", ".string>string"},
    {"upperAscii", ".string>string"},
    {"format", ".string,list(dyn)>string"},
    {"strings.quote", "string>string"},
    {"join", ".list(string)>string"},
    {"join", ".list(string),string>string"},
    /* sets (1.29) */
    {"sets.contains", "list(T),list(T)>bool"},
    {"sets.equivalent", "list(T),list(T)>bool"},
    {"sets.intersects", "list(T),list(T)>bool"},
    /* IP and CIDR (1.30) */
    {"ip", "string>net.IP"},
    {"family", ".net.IP>int"},
    {"ip.isCanonical", "string>bool"},
    {"isUnspecified", ".net.IP>bool"},
    {"isLoopback", ".net.IP>bool"},
    {"isLinkLocalMulticast", ".net.IP>bool"},
    {"isLinkLocalUnicast", ".net.IP>bool"},
    {"isGlobalUnicast", ".net.IP>bool"},
    {"isIP", "string>bool"},
    {"string", "net.IP>string"},
    {"cidr", "string>net.CIDR"},
    {"containsIP", ".net.CIDR,string>bool"},
    {"containsIP", ".net.CIDR,net.IP>bool"},
    {"containsCIDR", ".net.CIDR,string>bool"},
    {"containsCIDR", ".net.CIDR,net.CIDR>bool"},
    {"ip", ".net.CIDR>net.IP"},
    {"prefixLength", ".net.CIDR>int"},
    {"masked", ".net.CIDR>net.CIDR"},
    {"isCIDR", "string>bool"},
    {"string", "net.CIDR>string"},
    /* Format (1.31) */
    SK_CEL_FORMATS(FORMAT) /* lib_format.h's table */
    {"validate", ".#kubernetes.NamedFormat,string>optional_type(list(string))"},
    {"format.named", "string>optional_type(#kubernetes.NamedFormat)"},
    /* AuthzSelectors (1.31, on by default in 1.32) */
    {"fieldSelector",
     ".#kubernetes.authorization.ResourceCheck,string>#kubernetes.authorization.ResourceCheck"},
    {"labelSelector",
     ".#kubernetes.authorization.ResourceCheck,string>#kubernetes.authorization.ResourceCheck"},
    /* two-variable comprehensions (1.32) */
    {"cel.@mapInsert", "map(K,V),K,V>map(K,V)"},
    {"cel.@mapInsert", "map(K,V),map(K,V)>map(K,V)"},
};

#define NDECLS (sizeof decls / sizeof *decls)

static sk_cel_overload table[NDECLS];
static size_t order[NDECLS];           /* table indices sorted by function, then position */
static sk_cel_overload sorted[NDECLS]; /* table in that order: a function's overloads together */
static sk_arena *arena;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const sk_cel_ty *make(sk_arena *a, sk_cel_ty_kind kind, const char *name,
                             const sk_cel_ty *p0, const sk_cel_ty *p1)
{
    sk_cel_ty *t = sk_arena_alloc(a, sizeof *t);
    *t = (sk_cel_ty){kind, name, {p0, p1}, (size_t)(p0 != NULL) + (p1 != NULL), NULL};
    return t;
}

/* One type of a signature at *p, advancing *p past it. */
static const sk_cel_ty *parse_type(const char **p)
{
    const char *s = *p;
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.' || s[n] == '#')
        n++;
    char *name = sk_arena_alloc(arena, n + 1);
    memcpy(name, s, n);
    name[n] = '\0';
    *p = s + n;
    const sk_cel_ty *args[2] = {NULL, NULL};
    if (**p == '(') {
        for (size_t i = 0; **p != ')'; i++) {
            (*p)++;
            SK_CHECK(i < 2);
            args[i] = parse_type(p);
        }
        (*p)++;
    }
    static const struct {
        const char *name;
        sk_cel_ty_kind kind;
    } named[] = {{"dyn", SK_CEL_TY_DYN},           {"null_type", SK_CEL_TY_NULL},
                 {"bool", SK_CEL_TY_BOOL},         {"int", SK_CEL_TY_INT},
                 {"uint", SK_CEL_TY_UINT},         {"double", SK_CEL_TY_DOUBLE},
                 {"string", SK_CEL_TY_STRING},     {"bytes", SK_CEL_TY_BYTES},
                 {"duration", SK_CEL_TY_DURATION}, {"timestamp", SK_CEL_TY_TIMESTAMP}};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (strcmp(name, named[i].name) == 0)
            return sk_cel_ty_of(named[i].kind);
    if (strcmp(name, "list") == 0)
        return make(arena, SK_CEL_TY_LIST, NULL, args[0], NULL);
    if (strcmp(name, "map") == 0)
        return make(arena, SK_CEL_TY_MAP, NULL, args[0], args[1]);
    if (strcmp(name, "type") == 0)
        return make(arena, SK_CEL_TY_TYPE, NULL, args[0], NULL);
    if (n == 1 && isupper((unsigned char)*name))
        return make(arena, SK_CEL_TY_PARAM, name, NULL, NULL);
    if (*name == '#')
        return make(arena, SK_CEL_TY_OBJECT, name + 1, NULL, NULL);
    return make(arena, SK_CEL_TY_OPAQUE, name, args[0], args[1]);
}

static void note_params(sk_cel_overload *o, const sk_cel_ty *t)
{
    if (t->kind == SK_CEL_TY_PARAM) {
        for (int i = 0; i < o->nparams; i++)
            if (strcmp(o->params[i], t->name) == 0)
                return;
        SK_CHECK(o->nparams < 2);
        o->params[o->nparams++] = t->name;
        return;
    }
    for (size_t i = 0; i < t->np; i++)
        note_params(o, t->p[i]);
}

static int by_function(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int c = strcmp(table[i].function, table[j].function);
    return c ? c : (i > j) - (i < j);
}

static void init(void)
{
    arena = sk_arena_new();
    for (size_t i = 0; i < NDECLS; i++) {
        sk_cel_overload *o = &table[i];
        const char *p = decls[i].sig;
        o->function = decls[i].function;
        o->cross = *p == '~';
        p += o->cross;
        o->member = *p == '.';
        p += o->member;
        o->sig = p;
        const sk_cel_ty *args[4];
        while (*p != '>') {
            SK_CHECK(o->nargs < 4);
            args[o->nargs++] = parse_type(&p);
            if (*p == ',')
                p++;
        }
        p++;
        o->result = parse_type(&p);
        const sk_cel_ty **copy = sk_arena_alloc(arena, (o->nargs + 1) * sizeof *copy);
        memcpy(copy, args, o->nargs * sizeof *copy);
        o->args = copy;
        for (size_t k = 0; k < o->nargs; k++)
            note_params(o, o->args[k]);
        note_params(o, o->result);
        order[i] = i;
    }
    qsort(order, NDECLS, sizeof *order, by_function);
    for (size_t i = 0; i < NDECLS; i++)
        sorted[i] = table[order[i]];
}

const sk_cel_overload *sk_cel_overloads(const char *function, size_t *n)
{
    pthread_once(&once, init);
    size_t lo = 0, hi = NDECLS;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(sorted[mid].function, function) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < NDECLS && strcmp(sorted[end].function, function) == 0)
        end++;
    *n = end - lo;
    return end > lo ? &sorted[lo] : NULL;
}

/* The types value.h's sk_cel_type_named knows, as identifiers. */
static const decl type_idents[] = {
    {"bool", "type(bool)"},
    {"int", "type(int)"},
    {"uint", "type(uint)"},
    {"double", "type(double)"},
    {"string", "type(string)"},
    {"bytes", "type(bytes)"},
    {"list", "type(list(A))"},
    {"map", "type(map(A,B))"},
    {"null_type", "type(null_type)"},
    {"type", "type(type)"},
    {"google.protobuf.Duration", "type(duration)"},
    {"google.protobuf.Timestamp", "type(timestamp)"},
    {"optional_type", "type(optional_type(T))"},
    {"net.IP", "type(net.IP)"},
    {"net.CIDR", "type(net.CIDR)"},
};
#define NIDENTS (sizeof type_idents / sizeof *type_idents)
static const sk_cel_ty *ident_types[NIDENTS];
static pthread_once_t idents_once = PTHREAD_ONCE_INIT;

static void init_idents(void)
{
    pthread_once(&once, init); /* the arena */
    for (size_t i = 0; i < NIDENTS; i++) {
        const char *p = type_idents[i].sig;
        ident_types[i] = parse_type(&p);
    }
}

const sk_cel_ty *sk_cel_ty_ident(const char *name)
{
    pthread_once(&idents_once, init_idents);
    for (size_t i = 0; i < NIDENTS; i++)
        if (strcmp(type_idents[i].function, name) == 0)
            return ident_types[i];
    return NULL;
}

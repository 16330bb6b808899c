/*
 * schema.h - the types of the Kubernetes API objects sqlkube serves: every
 * field's JSON name, value type, protobuf number and Go spelling, as
 * kube-apiserver 1.32 decodes and encodes them.
 *
 * The facts come from src/kube/gen/api.json, which scripts/gen_kube_api.py
 * generates from Kubernetes' OpenAPI document and Go API types and the
 * build compiles in. They are loaded once, on first use (thread-safe), and
 * never change: every pointer handed out is valid for the process lifetime
 * and may be read from any thread.
 *
 * A schema is one value's type. Struct schemas are shared definitions
 * (io.k8s.api.core.v1.PodSpec); arrays and maps are anonymous schemas with
 * an element schema. What belongs to the place a value sits in rather than
 * to its type (omitempty, pointer, patch strategy, list semantics) is on
 * the field.
 */
#ifndef SK_KUBE_SCHEMA_H
#define SK_KUBE_SCHEMA_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sk_schema sk_schema;
typedef struct sk_schema_field sk_schema_field;

typedef enum sk_schema_kind {
    SK_SCHEMA_STRING,
    SK_SCHEMA_BYTES, /* []byte: standard base64 in JSON */
    SK_SCHEMA_BOOL,
    SK_SCHEMA_INT32,
    SK_SCHEMA_INT64,
    SK_SCHEMA_DOUBLE, /* float64: only JSONSchemaProps' bounds (a CRD's schema) */
    SK_SCHEMA_STRUCT,
    SK_SCHEMA_ARRAY,
    SK_SCHEMA_MAP, /* string keys */
    /* Types with a JSON form of their own (their Go types marshal themselves). */
    SK_SCHEMA_TIME,          /* meta/v1 Time: RFC 3339, seconds */
    SK_SCHEMA_MICROTIME,     /* meta/v1 MicroTime: RFC 3339, microseconds */
    SK_SCHEMA_QUANTITY,      /* resource.Quantity: "500m", "1Gi" */
    SK_SCHEMA_INT_OR_STRING, /* intstr.IntOrString: 8080 or "http" */
    SK_SCHEMA_RAW,           /* runtime.RawExtension: any JSON value */
    SK_SCHEMA_FIELDS_V1,     /* meta/v1 FieldsV1: any JSON object */
} sk_schema_kind;

/* Field flags. */
enum {
    SK_FIELD_OMITEMPTY = 1u << 0,   /* json tag has omitempty */
    SK_FIELD_POINTER = 1u << 1,     /* a Go pointer: present or absent, even when zero */
    SK_FIELD_REQUIRED = 1u << 2,    /* OpenAPI "required" */
    SK_FIELD_PATCH_MERGE = 1u << 3, /* x-kubernetes-patch-strategy has "merge" */
    SK_FIELD_PATCH_REPLACE = 1u << 4,
    SK_FIELD_RETAIN_KEYS = 1u << 5, /* ... has "retainKeys" */
    /* Protobuf view only: a struct embedded inline (json:",inline"). It has
     * no name; its type's fields sit in the same JSON object as the
     * embedding struct's own, but on the wire they are a nested message. */
    SK_FIELD_EMBEDDED = 1u << 6,
};

/* The definition named name ("io.k8s.api.core.v1.Pod"), or NULL. O(1). */
const sk_schema *sk_schema_named(const char *name);

sk_schema_kind sk_schema_kind_of(const sk_schema *s);
/* The definition name; NULL for anonymous (array, map, scalar) schemas. */
const char *sk_schema_name(const sk_schema *s);
/* How Go's reflect spells the type, as encoding/json errors name it:
 * "v1.PodSpec", "[]v1.Container", "map[string]string", "int32". */
const char *sk_schema_go_type(const sk_schema *s);
/* Array items and map values; NULL for other kinds. */
const sk_schema *sk_schema_elem(const sk_schema *s);

/* Struct fields in Go declaration order (the order encoding/json writes
 * them in); 0 / NULL for other kinds. */
size_t sk_schema_field_count(const sk_schema *s);
const sk_schema_field *sk_schema_field_at(const sk_schema *s, size_t i);
/* By JSON name (len bytes, not NUL-terminated) / protobuf number; NULL if
 * the struct has no such field. O(log fields). By number, a struct
 * embedded inline is one SK_FIELD_EMBEDDED field; by name, its fields are
 * the struct's own. */
const sk_schema_field *sk_schema_field_find(const sk_schema *s, const char *name, size_t len);
const sk_schema_field *sk_schema_field_by_number(const sk_schema *s, uint32_t number);
/* The protobuf view in ascending number order (the order to encode in). */
size_t sk_schema_pb_count(const sk_schema *s);
const sk_schema_field *sk_schema_pb_at(const sk_schema *s, size_t i);
/* The largest protobuf field number of a struct (0 if none). */
uint32_t sk_schema_max_number(const sk_schema *s);
/* The x-kubernetes-group-version-kind of a definition, as the OpenAPI
 * document gives it (array of {group, version, kind}), or NULL. */
const json_t *sk_schema_gvks(const sk_schema *s);
/* The map's x-kubernetes-map-type ("atomic", "granular") or NULL. */
const char *sk_schema_map_type(const sk_schema *s);

/* NULL for SK_FIELD_EMBEDDED. */
const char *sk_schema_field_name(const sk_schema_field *f);
/* Protobuf field number; 0 for apiVersion/kind (not on the protobuf wire). */
uint32_t sk_schema_field_number(const sk_schema_field *f);
unsigned sk_schema_field_flags(const sk_schema_field *f);
const sk_schema *sk_schema_field_type(const sk_schema_field *f);
/* x-kubernetes-patch-merge-key, or NULL. */
const char *sk_schema_field_merge_key(const sk_schema_field *f);
/* x-kubernetes-list-type ("atomic", "set", "map"), or NULL. */
const char *sk_schema_field_list_type(const sk_schema_field *f);
/* x-kubernetes-list-map-keys: NULL-terminated, or NULL. */
const char *const *sk_schema_field_list_map_keys(const sk_schema_field *f);
/* The field's default (its Go type's +default marker; borrowed), or NULL. */
const json_t *sk_schema_field_default(const sk_schema_field *f);

/*
 * The generated API description, parsed (borrowed; immutable: never
 * modify, incref or decref it). {"resources": [...], "definitions": {...}}
 * as scripts/gen_kube_api.py documents; for the registry and the OpenAPI
 * documents, which are built from it once.
 */
const json_t *sk_schema_api(void);

#endif

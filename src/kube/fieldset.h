/*
 * fieldset.h - sets of field paths over an object's schema, as server-side
 * apply tracks ownership (sigs.k8s.io/structured-merge-diff): built from an
 * object, compared, merged, and written as metadata.managedFields[].fieldsV1.
 *
 * A set is a JSON object tree keyed by path elements in kube's FieldsV1
 * spelling: "f:name" (a field or map key), "k:{\"name\":\"c\"}" (a list-map
 * entry by its keys, compact JSON sorted by key name), "v:\"x\"" (a set
 * item), "i:3" (an item of a list without semantics: deduced types only).
 * "." marks the node's own path as a member. Inside this module every
 * member carries "."; the FieldsV1 wire form writes a member without
 * children as {} (sk_fieldset_encode / sk_fieldset_decode convert).
 *
 * Types come from a built-in kind's generated schema (kube/schema.h), from a
 * CRD version's openAPIV3Schema (x-kubernetes-list-type, -list-map-keys,
 * -map-type), or are deduced from the value where neither says (maps are
 * granular, lists atomic), as structured-merge-diff deduces them.
 *
 * Pure functions over jansson values; every json_t * returned is a new
 * reference, arguments are borrowed and never modified unless said. A set
 * is a value: once made it is never modified in place (callers replace it),
 * so a result may share members with an argument.
 */
#ifndef SK_KUBE_FIELDSET_H
#define SK_KUBE_FIELDSET_H

#include "core/err.h"
#include "kube/schema.h"

#include <jansson.h>

/* The type of a whole object: a built-in kind's schema, or a custom
 * resource's openAPIV3Schema (may be NULL: everything deduced). */
typedef struct sk_fieldset_type {
    const sk_schema *schema;
    const json_t *openapi;
} sk_fieldset_type;

/*
 * The fields obj sets (structured-merge-diff's ToFieldSet): every scalar,
 * atomic list or map, list item and granular map entry is a member; a named
 * field of a struct is one only when its value is null or {}. A list-map
 * item without one of its keys is SK_ERR_INVALID with *errmsg (free()) as
 * kube words it (".spec.ports: element 0: associative list with keys has
 * an element that omits key field \"port\""); so is a field a built-in
 * kind's struct, or a CRD schema's object that keeps no unknown fields,
 * does not declare (".spec.foo: field not declared in schema").
 */
sk_err sk_fieldset_from_object(sk_fieldset_type t, const json_t *obj, json_t **out,
                               char **errmsg);

/*
 * What changed from old to new (either may be NULL: absent): *added,
 * *modified and *removed, as structured-merge-diff's Compare reports them
 * (atomic values and scalars are compared whole; containers only appear as
 * added or removed). A list item without its keys is skipped.
 */
void sk_fieldset_compare(sk_fieldset_type t, const json_t *old, const json_t *new_obj,
                         json_t **added, json_t **modified, json_t **removed);

/* The object a create is compared with (new reference): Go's zero value
 * of the kind, whose structs that are not pointers are present ({}), as
 * kube's typed conversion of an empty object gives them. A field that is
 * such a struct in the zero value is therefore never "added" by itself. */
json_t *sk_fieldset_zero(sk_fieldset_type t);

/*
 * What a create of obj sets, in the FieldsV1 wire form, stripped (as
 * sk_fieldset_strip with only_status 0): the same as sk_fieldset_encode of
 * the stripped union of sk_fieldset_compare(t, sk_fieldset_zero(t), obj)'s
 * added and modified sets, in one walk. NULL when it sets nothing.
 */
json_t *sk_fieldset_created(sk_fieldset_type t, const json_t *obj, int drop_status);

json_t *sk_fieldset_union(const json_t *a, const json_t *b);
json_t *sk_fieldset_difference(const json_t *a, const json_t *b);
json_t *sk_fieldset_intersection(const json_t *a, const json_t *b);
int sk_fieldset_empty(const json_t *set);

/* The set without the paths apply never tracks (kube's stripped fields:
 * apiVersion, kind, metadata itself and its server-set fields). With
 * only_status, everything outside .status is dropped too (a /status
 * write); with drop_status, .status is dropped (a kind whose status is a
 * subresource, written through the main resource). */
json_t *sk_fieldset_strip(const json_t *set, int only_status, int drop_status);

/* FieldsV1 wire form. decode answers NULL for a value that is not one. */
json_t *sk_fieldset_encode(const json_t *set);
json_t *sk_fieldset_decode(const json_t *fields_v1);

/* Calls fn with every member path of set, in kube's order, printed as
 * kube prints a fieldpath.Path (".spec.containers[name=\"c\"].image",
 * ".metadata.finalizers[=\"x\"]"). */
void sk_fieldset_each(const json_t *set, void (*fn)(void *ctx, const char *path), void *ctx);

/*
 * live with config merged in (structured-merge-diff's Merge): config's
 * scalars and atomic values replace, structs and granular maps merge by
 * key, list-maps and sets by item (live's order, new items after), other
 * lists are replaced. NULL live: a copy of config.
 */
json_t *sk_fieldset_merge(sk_fieldset_type t, const json_t *live, const json_t *config);

/* Removes from obj (modified in place) the value at every member path of
 * set; a struct or map left empty by that, whose own path is in
 * set_parents, goes too, unless keep owns it as a member. A member under which keep (what managers still
 * own) holds paths is not removed whole: what keep owns below it stays
 * and the rest goes, as structured-merge-diff's prune removes it and then
 * adds back every owned item. */
void sk_fieldset_remove(sk_fieldset_type t, json_t *obj, const json_t *set,
                        const json_t *set_parents, const json_t *keep);

#endif

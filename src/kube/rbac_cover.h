/*
 * rbac_cover.h - privilege-escalation prevention's question, pure: do the
 * rules a user holds cover the rules they ask to grant (in a Role or
 * ClusterRole they write, or through the role a binding they write
 * refers to), and kube-apiserver's refusal text when they do not.
 *
 * Coverage is kube's: each rule to grant is broken into atoms (one API
 * group, resource, verb and resource name; or one non-resource URL and
 * verb), and each atom must be covered by one held rule. "*" covers any
 * verb, group or resource, a held "*\/status" covers the status subresource
 * of anything, a held URL ending in "*" covers by prefix; a held rule with
 * resourceNames covers only atoms naming one of them. Rules are
 * rbac/v1 PolicyRule JSON; members that are absent are empty lists.
 */
#ifndef SK_KUBE_RBAC_COVER_H
#define SK_KUBE_RBAC_COVER_H

#include "core/buf.h"
#include "kube/user.h"

#include <jansson.h>

/* Whether the rules of held (an array, borrowed; NULL is none) cover every
 * rule of wanted (borrowed). *missing is set to a new array of the atoms
 * not covered (empty when covered). */
int sk_rbac_cover(const json_t *held, const json_t *wanted, json_t **missing);

/* Appends kube's refusal text for u (borrowed) asking to grant the atoms
 * missing (borrowed, sk_rbac_cover's): `user "bob" (groups=["g"
 * "system:authenticated"]) is attempting to grant RBAC permissions not
 * currently held:` then one line per compacted rule ({APIGroups:[""],
 * Resources:["pods"], Verbs:["get" "list"]}: an API group and resource's
 * atoms without names share a line), each once, sorted. errors (NULL or
 * "") is why the held rules may be incomplete (missing roles), appended
 * as kube does. */
void sk_rbac_cover_refusal(const sk_user *u, const json_t *missing, const char *errors,
                           sk_buf *out);

#endif

/*
 * condition.h - entries of an object's status.conditions, set as kube's own
 * writers set them (the CRD controllers' SetCRDCondition, the pod binding's
 * UpdatePodCondition): one entry per type, replaced where it stands or
 * appended, and its lastTransitionTime moves only when its status changes,
 * so a controller that re-asserts a condition every round does not make it
 * look new. One setter, so every condition the server writes follows that
 * rule. Pure: the time is the caller's.
 */
#ifndef SK_KUBE_CONDITION_H
#define SK_KUBE_CONDITION_H

#include <jansson.h>

/* Puts cond (stolen; an object with string "type" and "status") into obj's
 * status.conditions (status and the array are made when missing) in place
 * of the entry of the same type. Its lastTransitionTime is that entry's when
 * the status is the same, else now (RFC 3339). */
void sk_condition_set(json_t *obj, json_t *cond, const char *now);

#endif

/*
 * limits.h - the bounds every stored object keeps, whatever wrote it.
 *
 * Depth: jansson refuses to parse JSON nested deeper than 2048 levels, so
 * an object stored deeper could never be read back (lists, watches and
 * deletes would all fail on it), and patches can nest a stored object
 * deeper than any body that parses. kube-apiserver's decoders refuse deep
 * nesting too (typed kinds by their shape, unstructured JSON at 10000).
 * 256 levels is far beyond any built-in kind (Pods reach about 15) or real
 * custom resource, and keeps every recursive walk over stored JSON short.
 *
 * Size: the largest serialized object is a per-server setting
 * (--max-object-bytes, default 1.5 MiB like etcd's request limit),
 * enforced by the store's writer on every create, update and patch.
 */
#ifndef SK_KUBE_LIMITS_H
#define SK_KUBE_LIMITS_H

#include <jansson.h>

#define SK_OBJECT_MAX_DEPTH 256

/* Non-zero if v nests deeper than max levels (a scalar is level 1). */
int sk_json_deeper_than(const json_t *v, int max);

#endif

/*
 * etcdkey.h - what kube-apiserver's etcd keys and values say, read once when
 * a row of the etcd keyspace is decoded for SQL (ctl/kvdecode.h). Pure.
 *
 * Keys: kube-apiserver lays its objects out under its default prefix as
 * /registry/<resource>/[<namespace>/]<name>, or
 * /registry/<group>/<resource>/[<namespace>/]<name> when the first segment
 * holds a '.' (CRDs, custom resources, APIServices). Built-in resources are
 * keyed by resource alone (deployments, not apps/deployments), so their
 * group is empty. The prefixes kube renames are mapped back
 * (services/specs -> services, services/endpoints -> endpoints, minions ->
 * nodes, controllers -> replicationcontrollers, ingress -> ingresses);
 * other segments read as they are (masterleases, ranges). A key that is not
 * UTF-8 text, holds a NUL, or has empty or extra segments (compact_rev_key)
 * is not an object's.
 *
 * Values: kube's protobuf envelope (k8s\0 and a runtime.Unknown holding
 * apiVersion, kind and the object), JSON text (custom resources, or
 * --storage-media-type=application/json), a value kube-apiserver encrypted
 * at rest (k8s:enc:<provider>:...), or other bytes.
 */
#ifndef SK_KUBE_ETCDKEY_H
#define SK_KUBE_ETCDKEY_H

#include <stddef.h>

/* A decoded key: spans of the key's own bytes (borrowed); len 0 = none. */
typedef struct sk_etcdkey_span {
    const char *p;
    size_t len;
} sk_etcdkey_span;

typedef struct sk_etcdkey {
    int text;      /* the key is UTF-8 text without NUL */
    int is_object; /* the key is kube's layout: the spans below are set */
    sk_etcdkey_span group, resource, namespace, name;
} sk_etcdkey;

/* Reads key (len bytes); never fails (a key that is not an object's has
 * is_object 0). */
void sk_etcdkey_parse(const char *key, size_t len, sk_etcdkey *out);

typedef enum {
    SK_ETCDVAL_BYTES,     /* anything else */
    SK_ETCDVAL_PROTOBUF,  /* kube's envelope */
    SK_ETCDVAL_JSON,      /* a JSON object */
    SK_ETCDVAL_ENCRYPTED, /* k8s:enc:... */
} sk_etcdval_encoding;

/* What a value holds. */
typedef struct sk_etcdval {
    sk_etcdval_encoding encoding;
    /* new or NULL: the object as JSON text (a JSON value as it is; a
     * protobuf one as Go's encoding/json prints it), NULL when it cannot be
     * read (an unknown kind, a damaged message) */
    char *doc;
    /* new or NULL: the object's kind and apiVersion (a protobuf value's from
     * its envelope, even when the object cannot be read) */
    char *kind, *api_version;
} sk_etcdval;

/* Reads value (len bytes); never fails. sk_etcdval_clear frees what it holds. */
void sk_etcdval_parse(const char *value, size_t len, sk_etcdval *out);
void sk_etcdval_clear(sk_etcdval *v);
/* "protobuf", "json", "encrypted", "bytes". */
const char *sk_etcdval_encoding_name(sk_etcdval_encoding e);

#endif

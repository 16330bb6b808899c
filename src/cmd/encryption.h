/*
 * encryption.h - `serve --encryption-provider-config FILE`: kube's
 * EncryptionConfiguration (enc/enc.h) read from its file and handed to the
 * store as its value codec (store/store.h), so the store applies it to the
 * resources the file names without knowing of ciphers.
 *
 * Rows are named by the store's resource column ("secrets",
 * "deployments.apps"): the part before the first dot is the resource, the
 * rest its group. aesgcm binds each value to the key kube-apiserver would
 * keep it under in etcd ("/registry/secrets/default/s"), so a value moves
 * between kube's etcd and sqlkube with its prefix kept and the rest base64
 * decoded or encoded (resources kube keeps under another etcd path than
 * /registry/<resource>/ are not covered by that promise yet).
 */
#ifndef SK_CMD_ENCRYPTION_H
#define SK_CMD_ENCRYPTION_H

#include "store/store.h"

typedef struct sk_encryption sk_encryption;

/* Reads and validates the file at path. On failure NULL and *errmsg (new)
 * names the file and kube's reason. */
sk_encryption *sk_encryption_load(const char *path, char **errmsg);
/* The codec for sk_store_set_codec (borrowed from e). */
const sk_store_codec *sk_encryption_codec(const sk_encryption *e);
/* Non-zero when the file names providers for the resource column
 * ("secrets", "deployments.apps"), directly or by a wildcard. */
int sk_encryption_covers(const sk_encryption *e, const char *resource);
/* NULL-safe; zeroes the keys. */
void sk_encryption_free(sk_encryption *e);

#endif

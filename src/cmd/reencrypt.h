/*
 * reencrypt.h - `sqlkube reencrypt --encryption-provider-config FILE`: the
 * rewrite step of kube's key rotation, in place. Every live object of each
 * resource the file encrypts whose stored value its first provider and key
 * did not write is written again, unchanged, as a new revision through the
 * store's writer, so the first provider seals it (with identity first, the
 * values are decrypted). What kube documents as
 * `kubectl get secrets -A -o json | kubectl replace -f -`, without the API's
 * round trips and without a window in which a concurrent update is lost.
 *
 * It runs beside live servers: see reencrypt.c for why it goes to the
 * store and not through a server.
 */
#ifndef SK_CMD_REENCRYPT_H
#define SK_CMD_REENCRYPT_H

#include <stddef.h>

/* Rewrites the store at db with the configuration at config_path: the
 * resource columns named in resources (n of them, each one the file
 * encrypts), or with n 0 every resource of the store the file encrypts.
 * Prints one line per resource and a total on stdout (rewritten, skipped,
 * failed), each object that cannot be rewritten as one line on stderr.
 * The process's exit status: 0 only when every object is written with the
 * first key. */
int sk_cmd_reencrypt(const char *db, const char *config_path, const char *const *resources,
                     size_t n);

#endif

/*
 * kvdecode.h - the follower that decodes the etcd keyspace for SQL: every
 * row of sk_kv gets its row of sk_kv_doc (store.h, "decoded for SQL"), what
 * the views sk_kv_history and sk_kv_latest show, within moments of its
 * commit and never on the commit path.
 *
 * Each pass reads up to a batch of rows after the last one decoded, decodes
 * them (kube/etcdkey.h: the key in kube-apiserver's layout, the value's
 * encoding, kind, apiVersion and JSON, a protobuf value through sqlkube's
 * own codec) and writes the docs in one transaction. A full batch is
 * followed at once by the next pass (a backlog, such as the rows that were
 * there before the table existed, is worked off at once); otherwise the next
 * pass comes after DECODE_IDLE_MS. It starts from the newest doc in the
 * table, so a restart goes on where the last run stopped, and instances on
 * one database skip what another has decoded.
 */
#ifndef SK_CTL_KVDECODE_H
#define SK_CTL_KVDECODE_H

#include "ctl/ctl.h"
#include "store/store.h"

/* Starts the follower over store (borrowed: it must outlive the controller). */
sk_ctl *sk_kvdecode_start(sk_store *store);

#endif

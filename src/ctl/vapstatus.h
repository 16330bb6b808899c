/*
 * vapstatus.h - the ValidatingAdmissionPolicy status controller: what
 * kube-controller-manager 1.32's validatingadmissionpolicy-status
 * controller does (pkg/controller/validatingadmissionpolicystatus): for
 * each policy whose metadata.generation is past its
 * status.observedGeneration, the policy's expressions are type-checked
 * against the kinds it matches (policy/vaptype.h) and the status applied
 * through /status as kube's controller applies it (server-side apply,
 * forced, manager validatingadmissionpolicy-status): observedGeneration
 * the generation checked, typeChecking {expressionWarnings} ({} when
 * nothing warns, as kube's apply of an empty list leaves it).
 *
 * Every instance runs one. A pass runs once the cache applies a revision
 * the last did not see and reads the policies from it; a policy is parsed
 * only when its stored revision is newer than the last pass whose writes
 * all succeeded. The write is preconditioned on the revision read
 * (ctl/batch.h), so an update racing it, or another instance writing the
 * same status, makes it a conflict that changes nothing; the next pass
 * reads again. The check runs on the controller's thread, never a
 * request's.
 */
#ifndef SK_CTL_VAPSTATUS_H
#define SK_CTL_VAPSTATUS_H

#include "cache/cache.h"
#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"

/* Starts the controller; store, cache and reader are borrowed and must
 * outlive it. Stop it with sk_ctl_stop. */
sk_ctl *sk_vapstatus_start(sk_store *store, sk_cache *cache, sk_reader *reader);

#endif

/*
 * lib_net.h - Kubernetes' ip and cidr libraries (net.IP, net.CIDR values);
 * see lib.h.
 */
#ifndef SK_CEL_LIB_NET_H
#define SK_CEL_LIB_NET_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* As sk_cel_lib_call, for ip(), isIP(), ip.isCanonical(), cidr(),
 * isCIDR(), string() of an IP or CIDR and their methods. */
const sk_cel_val *sk_cel_lib_net(sk_cel_env *env, const char *f, int method,
                                 const sk_cel_val *const *v, size_t n);

#endif

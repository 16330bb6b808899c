#!/usr/bin/env python3
"""Generates src/kube/gen/rbac_bootstrap.json: kube-apiserver 1.32's bootstrap
RBAC policy (the roles and bindings it creates at start), as data.

Input: a directory holding Kubernetes' own record of that policy,
kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/
{cluster-roles,cluster-role-bindings,namespace-roles,namespace-role-bindings}.yaml
(the files kube's tests compare its policy code against). Only facts are kept:
names, namespaces, labels, annotations (rbac.authorization.kubernetes.io/autoupdate),
rules, aggregation rules, role references and subjects. Every object becomes
rbac.authorization.k8s.io/v1 (older snapshots of the bindings say v1beta1).
The controller roles (controller-roles.yaml) are not part of it yet.

usage: scripts/gen_rbac_bootstrap.py TESTDATA_DIR > src/kube/gen/rbac_bootstrap.json
"""

import json
import os
import sys

import yaml

FILES = [
    ("clusterroles", "cluster-roles.yaml", "ClusterRole"),
    ("clusterrolebindings", "cluster-role-bindings.yaml", "ClusterRoleBinding"),
    ("roles", "namespace-roles.yaml", "Role"),
    ("rolebindings", "namespace-role-bindings.yaml", "RoleBinding"),
]
META_KEYS = ("name", "namespace", "labels", "annotations")
BODY_KEYS = ("aggregationRule", "rules", "roleRef", "subjects")


def fact(item, kind):
    if item.get("kind") != kind:
        raise SystemExit("unexpected kind %r (want %s)" % (item.get("kind"), kind))
    meta = {k: item["metadata"][k] for k in META_KEYS if item["metadata"].get(k)}
    out = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta}
    for k in BODY_KEYS:
        if item.get(k) is not None:
            out[k] = item[k]
    return out


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    doc = {}
    for key, name, kind in FILES:
        with open(os.path.join(sys.argv[1], name)) as f:
            items = yaml.safe_load(f)["items"]
        doc[key] = [fact(i, kind) for i in items]
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

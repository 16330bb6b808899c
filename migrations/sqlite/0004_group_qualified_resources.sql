-- 0004: the resource column names a resource as kube-apiserver's storage
-- does: the plural for the core group ("pods"), "<plural>.<group>" for
-- every other group ("deployments.apps"), so resources of different groups
-- with one plural stay apart. Of the resources stored before this step,
-- only leases belong to a named group.
UPDATE sk_history SET resource = 'leases.coordination.k8s.io' WHERE resource = 'leases';
UPDATE sk_current SET resource = 'leases.coordination.k8s.io' WHERE resource = 'leases';
UPDATE sk_ttl SET resource = 'leases.coordination.k8s.io' WHERE resource = 'leases';

-- 0013: rows encrypted at rest (issue 47) show as such in sk_objects. Their
-- value is kube's prefix "k8s:enc:<provider>:v1:<key name>:" and base64
-- ciphertext: the view gives no object for them and names, in
-- encrypted_with, the provider and key that wrote the row (the prefix
-- without its last colon). rtrim(value, <every character but ':'>) cuts the
-- value back to its last colon, which ends the prefix (base64 has none).
-- Plain rows have encrypted_with NULL and read as before.
DROP VIEW sk_objects;
CREATE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version,
           CASE WHEN substr(h.value, 1, 8) = 'k8s:enc:' THEN NULL ELSE h.value END AS object,
           CASE WHEN substr(h.value, 1, 8) = 'k8s:enc:'
                THEN rtrim(rtrim(h.value, replace(h.value, ':', '')), ':') END AS encrypted_with
    FROM sk_history h
    WHERE h.deleted = 0 AND h.superseded = 0;

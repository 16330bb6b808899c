-- 0013: rows encrypted at rest (issue 47) show as such in sk_objects. Their
-- value is kube's prefix "k8s:enc:<provider>:v1:<key name>:" and base64
-- ciphertext, which is not JSON: cast to jsonb it failed the whole query.
-- The view gives no object for them and names, in encrypted_with, the
-- provider and key that wrote the row (the prefix without its last colon;
-- base64 has none). Plain rows have encrypted_with NULL and read as before.
-- The new column comes last, so the view is replaced in place and views
-- people built on it survive.
CREATE OR REPLACE VIEW sk_objects AS
    SELECT h.resource, h.namespace, h.name, h.rev AS resource_version,
           CASE WHEN left(h.value, 8) = 'k8s:enc:' THEN NULL ELSE h.value::jsonb END AS object,
           substring(h.value FROM '^(k8s:enc:[^:]+:v1:.*):[A-Za-z0-9+/=]*$') AS encrypted_with
    FROM sk_history h
    WHERE NOT h.deleted AND NOT h.superseded;

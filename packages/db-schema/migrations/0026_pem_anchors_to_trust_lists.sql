-- Issue 25: the PEM trust_anchors of presentation configurations and wallet providers become pem
-- trust lists named in trust_list_ids. A set's list id is anchorsTrustListId (src/anchor-lists.ts):
-- 'anchors-' and 12 hex digits of SHA-256 over the trimmed, distinct PEMs sorted COLLATE "C" and
-- joined by newlines, so identical sets of one tenant share one list. Idempotent: emptied anchors
-- are not read again. The columns stay for old processes during a rolling upgrade (dropped later).
WITH "owners" AS (
	SELECT o."kind", o."tenant_id", o."id", c."certificates",
		'anchors-' || left(encode(sha256(convert_to(array_to_string(c."certificates", E'\n'), 'UTF8')), 'hex'), 12) AS "list_id"
	FROM (
		SELECT 'presentation-config' AS "kind", "tenant_id", "id", "trust_anchors"
		FROM "presentation_configs" WHERE cardinality("trust_anchors") > 0
		UNION ALL
		SELECT 'wallet-provider', "tenant_id", "id", "trust_anchors"
		FROM "wallet_providers" WHERE cardinality("trust_anchors") > 0
	) o
	CROSS JOIN LATERAL (
		SELECT array_agg(p."pem" ORDER BY p."pem" COLLATE "C") AS "certificates"
		FROM (SELECT DISTINCT btrim(a, E' \t\r\n') AS "pem" FROM unnest(o."trust_anchors") a) p
		WHERE p."pem" <> ''
	) c
),
"created" AS (
	INSERT INTO "trust_lists" ("tenant_id", "id", "description", "source", "grace_seconds", "certificates")
	SELECT DISTINCT ON ("tenant_id", "list_id") "tenant_id", "list_id", 'Converted from trustAnchors (PEM)',
		jsonb_build_object('type', 'pem', 'certificates', to_jsonb("certificates")), 86400, "certificates"
	FROM "owners" WHERE "list_id" IS NOT NULL
	ORDER BY "tenant_id", "list_id"
	ON CONFLICT ("tenant_id", "id") DO NOTHING
	RETURNING "tenant_id", "id"
),
"audited" AS (
	INSERT INTO "audit_log" ("id", "tenant_id", "actor_client_id", "action", "resource_type", "resource_id", "detail")
	SELECT 'aud_' || substr(md5(gen_random_uuid()::text), 1, 20), "tenant_id", 'system:migration', 'create',
		'trust-list', "id", '{"migration":"0026_pem_anchors_to_trust_lists","convertedFrom":"trustAnchors"}'::jsonb
	FROM "created"
),
"configs" AS (
	UPDATE "presentation_configs" t SET
		"trust_list_ids" = CASE
			WHEN o."list_id" IS NULL OR o."list_id" = ANY(coalesce(t."trust_list_ids", '{}')) THEN t."trust_list_ids"
			ELSE coalesce(t."trust_list_ids", '{}') || o."list_id" END,
		"trust_anchors" = NULL,
		"updated_at" = now()
	FROM "owners" o
	WHERE o."kind" = 'presentation-config' AND t."tenant_id" = o."tenant_id" AND t."id" = o."id"
),
"providers" AS (
	UPDATE "wallet_providers" t SET
		"trust_list_ids" = CASE
			WHEN o."list_id" IS NULL OR o."list_id" = ANY(coalesce(t."trust_list_ids", '{}')) THEN t."trust_list_ids"
			ELSE coalesce(t."trust_list_ids", '{}') || o."list_id" END,
		"trust_anchors" = '{}',
		"updated_at" = now()
	FROM "owners" o
	WHERE o."kind" = 'wallet-provider' AND t."tenant_id" = o."tenant_id" AND t."id" = o."id"
)
-- Every process's tenant cache reads the changed tenants again once this commits.
SELECT pg_notify('credential_service_tenant_changes', "tenant_id") FROM (SELECT DISTINCT "tenant_id" FROM "owners") n;

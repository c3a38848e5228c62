CREATE TABLE "schema_metadata_versions" (
	"tenant_id" text NOT NULL,
	"vct" text NOT NULL,
	"ordinal" integer NOT NULL,
	"version" text NOT NULL,
	"integrity" text NOT NULL,
	"previous_integrity" text,
	"key_chain_id" text NOT NULL,
	"kid" text NOT NULL,
	"signed_by" text NOT NULL,
	"signed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "schema_metadata_versions_tenant_id_vct_ordinal_pk" PRIMARY KEY("tenant_id","vct","ordinal"),
	CONSTRAINT "schema_metadata_versions_version_unique" UNIQUE("tenant_id","vct","version")
);
--> statement-breakpoint
ALTER TABLE "schema_metadata_versions" ADD CONSTRAINT "schema_metadata_versions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;
CREATE TABLE "federation_memberships" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"key_chain_id" text NOT NULL,
	"authority_hints" text[] NOT NULL,
	"trust_anchors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"trust_marks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"subordinate_statements" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"lifetime_seconds" integer DEFAULT 86400 NOT NULL,
	"organization_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "federation_memberships" ADD CONSTRAINT "federation_memberships_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "federation_memberships" ADD CONSTRAINT "federation_memberships_key_chain_fk" FOREIGN KEY ("tenant_id","key_chain_id") REFERENCES "public"."key_chains"("tenant_id","id") ON DELETE no action ON UPDATE no action;
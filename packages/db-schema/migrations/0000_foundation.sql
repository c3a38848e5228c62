CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text,
	"actor_client_id" text NOT NULL,
	"action" text NOT NULL,
	"resource_type" text NOT NULL,
	"resource_id" text NOT NULL,
	"detail" jsonb,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "clients" (
	"client_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text,
	"description" text,
	"secret_hash" text NOT NULL,
	"roles" text[] NOT NULL,
	"allowed_presentation_configs" text[],
	"allowed_issuance_configs" text[],
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"secret_rotated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "key_chains" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"kms_provider" text DEFAULT 'db' NOT NULL,
	"external_key_id" text,
	"algorithm" text NOT NULL,
	"certificate_mode" text NOT NULL,
	"subject" text NOT NULL,
	"dns_names" text[] DEFAULT '{}' NOT NULL,
	"active_jwk" text NOT NULL,
	"active_kid" text NOT NULL,
	"active_public_jwk" jsonb NOT NULL,
	"active_certificates" text[] DEFAULT '{}' NOT NULL,
	"root_jwk" text,
	"root_certificate" text,
	"previous_jwk" text,
	"previous_kid" text,
	"previous_public_jwk" jsonb,
	"previous_certificates" text[],
	"previous_expires_at" timestamp with time zone,
	"rotation_enabled" boolean DEFAULT false NOT NULL,
	"rotation_interval_days" integer DEFAULT 90 NOT NULL,
	"rotation_grace_days" integer DEFAULT 30 NOT NULL,
	"rotated_at" timestamp with time zone,
	"next_rotation_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "key_chains_tenant_id_id_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "key_chains_kms_provider_known" CHECK ("key_chains"."kms_provider" in ('db', 'vault', 'aws-kms')),
	CONSTRAINT "key_chains_external_key_id_required" CHECK ("key_chains"."kms_provider" = 'db' or "key_chains"."external_key_id" is not null),
	CONSTRAINT "key_chains_previous_complete" CHECK (("key_chains"."previous_jwk" is null) = ("key_chains"."previous_kid" is null))
);
--> statement-breakpoint
CREATE TABLE "service_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "clients" ADD CONSTRAINT "clients_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "key_chains" ADD CONSTRAINT "key_chains_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_tenant_id_at_index" ON "audit_log" USING btree ("tenant_id","at");--> statement-breakpoint
CREATE INDEX "clients_tenant_id_client_id_index" ON "clients" USING btree ("tenant_id","client_id");--> statement-breakpoint
CREATE INDEX "key_chains_rotation_due" ON "key_chains" USING btree ("next_rotation_at") WHERE "key_chains"."rotation_enabled";
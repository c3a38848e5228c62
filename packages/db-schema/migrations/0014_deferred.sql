CREATE TABLE "credential_encryption_keys" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"kid" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_jwk_encrypted" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deferred_credentials" (
	"tenant_id" text NOT NULL,
	"transaction_id_hash" text NOT NULL,
	"session_id" text NOT NULL,
	"credential_configuration_id" text NOT NULL,
	"holder_keys" jsonb NOT NULL,
	"interval_seconds" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deferred_credentials_tenant_id_transaction_id_hash_pk" PRIMARY KEY("tenant_id","transaction_id_hash")
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "credential_encryption" text DEFAULT 'optional' NOT NULL;--> statement-breakpoint
ALTER TABLE "credential_encryption_keys" ADD CONSTRAINT "credential_encryption_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deferred_credentials" ADD CONSTRAINT "deferred_credentials_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deferred_credentials" ADD CONSTRAINT "deferred_credentials_session_fk" FOREIGN KEY ("tenant_id","session_id") REFERENCES "public"."issuance_sessions"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "deferred_credentials_session" ON "deferred_credentials" USING btree ("tenant_id","session_id");
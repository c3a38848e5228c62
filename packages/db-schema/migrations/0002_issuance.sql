CREATE TABLE "issuance_sessions" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"status" text NOT NULL,
	"credential_configuration_ids" text[] NOT NULL,
	"issued_configuration_ids" text[] DEFAULT '{}' NOT NULL,
	"claims" jsonb NOT NULL,
	"pre_authorized_code_hash" text NOT NULL,
	"tx_code_hash" text,
	"tx_code_spec" jsonb,
	"tx_code_attempts" integer DEFAULT 0 NOT NULL,
	"by_reference" boolean DEFAULT false NOT NULL,
	"offer_code_encrypted" text,
	"created_by_client_id" text NOT NULL,
	"failure_reason" text,
	"expires_at" timestamp with time zone NOT NULL,
	"offer_fetched_at" timestamp with time zone,
	"token_issued_at" timestamp with time zone,
	"credential_issued_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "issuance_sessions_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "nonces" (
	"tenant_id" text NOT NULL,
	"value" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "nonces_tenant_id_value_pk" PRIMARY KEY("tenant_id","value")
);
--> statement-breakpoint
ALTER TABLE "issuance_sessions" ADD CONSTRAINT "issuance_sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "nonces" ADD CONSTRAINT "nonces_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "issuance_sessions_code" ON "issuance_sessions" USING btree ("tenant_id","pre_authorized_code_hash");--> statement-breakpoint
CREATE INDEX "issuance_sessions_status" ON "issuance_sessions" USING btree ("tenant_id","status","created_at");--> statement-breakpoint
CREATE INDEX "nonces_expiry" ON "nonces" USING btree ("expires_at");
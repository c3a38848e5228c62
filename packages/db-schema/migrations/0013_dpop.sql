CREATE TABLE "used_jtis" (
	"tenant_id" text NOT NULL,
	"value" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "used_jtis_tenant_id_value_pk" PRIMARY KEY("tenant_id","value")
);
--> statement-breakpoint
CREATE TABLE "wallet_providers" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"trust_anchors" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "wallet_providers_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "credential_configs" ADD COLUMN "dpop" text DEFAULT 'optional' NOT NULL;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD COLUMN "wallet_attestation" text DEFAULT 'optional' NOT NULL;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD COLUMN "key_attestation" jsonb;--> statement-breakpoint
ALTER TABLE "used_jtis" ADD CONSTRAINT "used_jtis_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_providers" ADD CONSTRAINT "wallet_providers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "used_jtis_expiry" ON "used_jtis" USING btree ("expires_at");
CREATE TABLE "registrar_configs" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"base_url" text NOT NULL,
	"token_url" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret" text NOT NULL,
	"relying_party_id" text,
	"relying_party_name" text,
	"relying_party_roles" text[],
	"registered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "registration_certificates" (
	"tenant_id" text NOT NULL,
	"presentation_config_id" text NOT NULL,
	"registrar_certificate_id" text NOT NULL,
	"jwt" text NOT NULL,
	"dcql_hash" text NOT NULL,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "registration_certificates_tenant_id_presentation_config_id_pk" PRIMARY KEY("tenant_id","presentation_config_id")
);
--> statement-breakpoint
ALTER TABLE "key_chains" ADD COLUMN "previous_certificate_mode" text;--> statement-breakpoint
ALTER TABLE "registrar_configs" ADD CONSTRAINT "registrar_configs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registration_certificates" ADD CONSTRAINT "registration_certificates_presentation_config_fk" FOREIGN KEY ("tenant_id","presentation_config_id") REFERENCES "public"."presentation_configs"("tenant_id","id") ON DELETE cascade ON UPDATE no action;
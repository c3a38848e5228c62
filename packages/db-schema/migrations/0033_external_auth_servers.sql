CREATE TABLE "auth_servers" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"issuer" text NOT NULL,
	"token_check" text NOT NULL,
	"client_id" text,
	"client_secret_encrypted" text,
	"credential_configuration_ids" text[] NOT NULL,
	"mapping" text[] NOT NULL,
	"claims_source" text NOT NULL,
	"single_use_tokens" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "auth_servers_tenant_id_id_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "auth_servers_token_check" CHECK (("auth_servers"."token_check" = 'jwt') or ("auth_servers"."token_check" = 'introspection' and "auth_servers"."client_id" is not null)),
	CONSTRAINT "auth_servers_claims_source_check" CHECK ("auth_servers"."claims_source" in ('token', 'attribute-provider'))
);
--> statement-breakpoint
ALTER TABLE "issuance_sessions" ADD COLUMN "external_token_key" text;--> statement-breakpoint
ALTER TABLE "auth_servers" ADD CONSTRAINT "auth_servers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "auth_servers_issuer" ON "auth_servers" USING btree ("tenant_id","issuer");--> statement-breakpoint
CREATE UNIQUE INDEX "issuance_sessions_external_token" ON "issuance_sessions" USING btree ("tenant_id","external_token_key");
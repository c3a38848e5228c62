CREATE TABLE "authorization_requests" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"status" text NOT NULL,
	"request_uri_hash" text NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"state" text,
	"credential_configuration_ids" text[] NOT NULL,
	"detail_configuration_ids" text[] NOT NULL,
	"session_id" text,
	"dpop_jkt" text,
	"login_state_hash" text,
	"login_secrets_encrypted" text,
	"code_hash" text,
	"refresh_token_hash" text,
	"refresh_count" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "authorization_requests_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "login_providers" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_encrypted" text,
	"scopes" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "login_providers_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "credential_configs" ADD COLUMN "login_provider_id" text;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD COLUMN "login_claims" jsonb;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD COLUMN "refresh_tokens" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "issuance_sessions" ADD COLUMN "issuer_state_hash" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD CONSTRAINT "authorization_requests_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "login_providers" ADD CONSTRAINT "login_providers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_request_uri" ON "authorization_requests" USING btree ("tenant_id","request_uri_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_login_state" ON "authorization_requests" USING btree ("tenant_id","login_state_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_code" ON "authorization_requests" USING btree ("tenant_id","code_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_refresh" ON "authorization_requests" USING btree ("tenant_id","refresh_token_hash");--> statement-breakpoint
CREATE INDEX "authorization_requests_expiry" ON "authorization_requests" USING btree ("expires_at");--> statement-breakpoint
ALTER TABLE "credential_configs" ADD CONSTRAINT "credential_configs_login_provider_fk" FOREIGN KEY ("tenant_id","login_provider_id") REFERENCES "public"."login_providers"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "issuance_sessions_issuer_state" ON "issuance_sessions" USING btree ("tenant_id","issuer_state_hash");
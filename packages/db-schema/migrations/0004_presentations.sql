CREATE TABLE "presentation_sessions" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"request_id" text NOT NULL,
	"status" text NOT NULL,
	"presentation_config_id" text NOT NULL,
	"client_id" text NOT NULL,
	"nonce" text NOT NULL,
	"state" text NOT NULL,
	"response_mode" text NOT NULL,
	"redirect_uri" text,
	"transaction_data" jsonb,
	"webhook_endpoint_id" text,
	"encryption_key" text NOT NULL,
	"encryption_kid" text NOT NULL,
	"created_by_client_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"request_fetched_at" timestamp with time zone,
	"response_received_at" timestamp with time zone,
	"response_code_hash" text,
	"result" jsonb,
	"failure_reason" text,
	"delivery_status" text DEFAULT 'none' NOT NULL,
	"delivery_attempts" integer DEFAULT 0 NOT NULL,
	"delivery_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "presentation_sessions_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD COLUMN "client_id_prefix" text DEFAULT 'x509_san_dns' NOT NULL;--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD COLUMN "trust_anchors" text[];--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD COLUMN "accept_any_issuer" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "presentation_retention" text DEFAULT 'keep' NOT NULL;--> statement-breakpoint
ALTER TABLE "presentation_sessions" ADD CONSTRAINT "presentation_sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "presentation_sessions_request" ON "presentation_sessions" USING btree ("tenant_id","request_id");--> statement-breakpoint
CREATE INDEX "presentation_sessions_status" ON "presentation_sessions" USING btree ("tenant_id","status","created_at");
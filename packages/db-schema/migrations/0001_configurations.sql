CREATE TABLE "attribute_providers" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"url" text NOT NULL,
	"auth_type" text NOT NULL,
	"auth_header" text,
	"auth_secret" text,
	"timeout_ms" integer DEFAULT 5000 NOT NULL,
	CONSTRAINT "attribute_providers_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "credential_configs" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"format" text NOT NULL,
	"doc_type" text,
	"vct" text,
	"scope" text NOT NULL,
	"display" jsonb,
	"fields" jsonb NOT NULL,
	"key_chain_id" text NOT NULL,
	"attribute_provider_id" text,
	"webhook_endpoint_id" text,
	"lifetime_seconds" integer NOT NULL,
	"key_binding" boolean NOT NULL,
	"status_management" boolean NOT NULL,
	"batch_size" integer NOT NULL,
	CONSTRAINT "credential_configs_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "presentation_configs" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"dcql_query" jsonb NOT NULL,
	"lifetime_seconds" integer NOT NULL,
	"response_mode" text NOT NULL,
	"transaction_data_types" text[],
	"webhook_endpoint_id" text,
	"redirect_uri" text,
	"key_chain_id" text NOT NULL,
	CONSTRAINT "presentation_configs_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"url" text NOT NULL,
	"auth_type" text NOT NULL,
	"auth_header" text,
	"auth_secret" text,
	"events" text[],
	CONSTRAINT "webhook_endpoints_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "attribute_providers" ADD CONSTRAINT "attribute_providers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD CONSTRAINT "credential_configs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD CONSTRAINT "credential_configs_key_chain_fk" FOREIGN KEY ("tenant_id","key_chain_id") REFERENCES "public"."key_chains"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD CONSTRAINT "credential_configs_attribute_provider_fk" FOREIGN KEY ("tenant_id","attribute_provider_id") REFERENCES "public"."attribute_providers"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credential_configs" ADD CONSTRAINT "credential_configs_webhook_endpoint_fk" FOREIGN KEY ("tenant_id","webhook_endpoint_id") REFERENCES "public"."webhook_endpoints"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD CONSTRAINT "presentation_configs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD CONSTRAINT "presentation_configs_key_chain_fk" FOREIGN KEY ("tenant_id","key_chain_id") REFERENCES "public"."key_chains"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD CONSTRAINT "presentation_configs_webhook_endpoint_fk" FOREIGN KEY ("tenant_id","webhook_endpoint_id") REFERENCES "public"."webhook_endpoints"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;
CREATE TABLE "trust_lists" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"description" text,
	"source" jsonb NOT NULL,
	"grace_seconds" integer NOT NULL,
	"certificates" text[] DEFAULT '{}' NOT NULL,
	"list_issued_at" timestamp with time zone,
	"next_update" timestamp with time zone,
	"fetched_at" timestamp with time zone,
	"last_error" text,
	"last_error_at" timestamp with time zone,
	"next_refresh_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trust_lists_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "presentation_configs" ADD COLUMN "trust_list_ids" text[];--> statement-breakpoint
ALTER TABLE "trust_lists" ADD CONSTRAINT "trust_lists_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "trust_lists_due" ON "trust_lists" USING btree ("next_refresh_at");
CREATE TABLE "issuance_notifications" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"session_id" text NOT NULL,
	"credential_configuration_id" text NOT NULL,
	"event" text,
	"event_description" text,
	"received_at" timestamp with time zone,
	"delivery_status" text DEFAULT 'none' NOT NULL,
	"delivery_attempts" integer DEFAULT 0 NOT NULL,
	"delivery_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "issuance_notifications_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "issuance_notifications" ADD CONSTRAINT "issuance_notifications_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "issuance_notifications_session" ON "issuance_notifications" USING btree ("tenant_id","session_id");
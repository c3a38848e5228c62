CREATE TABLE "status_list_entries" (
	"tenant_id" text NOT NULL,
	"list_id" text NOT NULL,
	"idx" integer NOT NULL,
	"status" smallint DEFAULT 0 NOT NULL,
	"session_id" text NOT NULL,
	"credential_configuration_id" text NOT NULL,
	"handle" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "status_list_entries_tenant_id_list_id_idx_pk" PRIMARY KEY("tenant_id","list_id","idx"),
	CONSTRAINT "status_list_entries_status" CHECK ("status_list_entries"."status" in (0, 1, 2)),
	CONSTRAINT "status_list_entries_idx" CHECK ("status_list_entries"."idx" >= 0)
);
--> statement-breakpoint
CREATE TABLE "status_lists" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"key_chain_id" text NOT NULL,
	"seq" integer NOT NULL,
	"bits" integer NOT NULL,
	"size" integer NOT NULL,
	"capacity" integer NOT NULL,
	"allocated" integer DEFAULT 0 NOT NULL,
	"version" integer DEFAULT 0 NOT NULL,
	"token" text,
	"token_version" integer,
	"token_signed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "status_lists_tenant_id_id_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "status_lists_bits" CHECK ("status_lists"."bits" in (1, 2, 4, 8)),
	CONSTRAINT "status_lists_size" CHECK ("status_lists"."size" > 0 and ("status_lists"."size" * "status_lists"."bits") % 8 = 0),
	CONSTRAINT "status_lists_allocated" CHECK ("status_lists"."allocated" >= 0 and "status_lists"."allocated" <= "status_lists"."capacity"),
	CONSTRAINT "status_lists_capacity" CHECK ("status_lists"."capacity" > 0 and "status_lists"."capacity" <= "status_lists"."size")
);
--> statement-breakpoint
ALTER TABLE "issuance_sessions" ADD COLUMN "status_handle" text;--> statement-breakpoint
ALTER TABLE "status_list_entries" ADD CONSTRAINT "status_list_entries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "status_list_entries" ADD CONSTRAINT "status_list_entries_list_fk" FOREIGN KEY ("tenant_id","list_id") REFERENCES "public"."status_lists"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "status_lists" ADD CONSTRAINT "status_lists_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "status_list_entries_session" ON "status_list_entries" USING btree ("tenant_id","session_id");--> statement-breakpoint
CREATE INDEX "status_list_entries_handle" ON "status_list_entries" USING btree ("tenant_id","handle");--> statement-breakpoint
CREATE INDEX "status_list_entries_set" ON "status_list_entries" USING btree ("tenant_id","list_id") WHERE "status_list_entries"."status" <> 0;--> statement-breakpoint
CREATE UNIQUE INDEX "status_lists_key_chain_seq" ON "status_lists" USING btree ("tenant_id","key_chain_id","seq");
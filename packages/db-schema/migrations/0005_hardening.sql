CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL,
	"reset_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "generation" text DEFAULT gen_random_uuid()::text NOT NULL;--> statement-breakpoint
-- Added by hand: counters need no crash safety (a crash just opens fresh windows), and skipping the WAL keeps the per-request upsert cheap.
ALTER TABLE "rate_limits" SET UNLOGGED;

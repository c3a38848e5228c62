ALTER TABLE "issuance_sessions" ADD COLUMN "expiry_reported_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "presentation_sessions" ADD COLUMN "expiry_reported_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "dedupe_key" text;--> statement-breakpoint
-- Offers and requests that expired before this release are not reported (no flood of old events at upgrade).
UPDATE "issuance_sessions" SET "expiry_reported_at" = now() WHERE "expires_at" <= now();--> statement-breakpoint
UPDATE "presentation_sessions" SET "expiry_reported_at" = now() WHERE "expires_at" <= now();--> statement-breakpoint
CREATE INDEX "issuance_sessions_expiry_due" ON "issuance_sessions" USING btree ("expires_at") WHERE "issuance_sessions"."status" = 'offered' and "issuance_sessions"."expiry_reported_at" is null;--> statement-breakpoint
CREATE INDEX "presentation_sessions_expiry_due" ON "presentation_sessions" USING btree ("expires_at") WHERE "presentation_sessions"."status" = 'pending' and "presentation_sessions"."expiry_reported_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_dedupe" ON "webhook_deliveries" USING btree ("tenant_id","endpoint_id","dedupe_key");
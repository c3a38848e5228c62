-- Redeemed offers that expired before this release are not reported as abandoned (no flood of old events at upgrade).
UPDATE "issuance_sessions" SET "expiry_reported_at" = now() WHERE "status" = 'token_issued' AND "expires_at" <= now() AND "expiry_reported_at" IS NULL;--> statement-breakpoint
DROP INDEX "issuance_sessions_expiry_due";--> statement-breakpoint
CREATE INDEX "issuance_sessions_expiry_due" ON "issuance_sessions" USING btree ("expires_at") WHERE "issuance_sessions"."status" in ('offered', 'token_issued') and "issuance_sessions"."expiry_reported_at" is null;

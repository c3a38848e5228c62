ALTER TABLE "authorization_requests" ADD COLUMN "previous_refresh_token_hash" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "grant_expires_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_previous_refresh" ON "authorization_requests" USING btree ("tenant_id","previous_refresh_token_hash");
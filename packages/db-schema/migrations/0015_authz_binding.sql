ALTER TABLE "authorization_requests" ADD COLUMN "attested_client_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "login_provider_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "login_browser_hash" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "login_claims_encrypted" text;
ALTER TABLE "authorization_requests" ADD COLUMN "attested_client_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "login_provider_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "login_browser_hash" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "login_claims_encrypted" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "previous_refresh_token_hash" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "grant_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "deferred_credentials" ADD COLUMN "next_ask_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "status_lists" ADD CONSTRAINT "status_lists_key_chain_fk" FOREIGN KEY ("tenant_id","key_chain_id") REFERENCES "public"."key_chains"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_previous_refresh" ON "authorization_requests" USING btree ("tenant_id","previous_refresh_token_hash");
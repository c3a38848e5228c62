ALTER TABLE "authorization_requests" ADD COLUMN "attestation_jkt" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "presentation_session_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "same_device_presentation_session_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "auth_session_hash" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "interaction_type" text;--> statement-breakpoint
CREATE UNIQUE INDEX "authorization_requests_auth_session" ON "authorization_requests" USING btree ("tenant_id","auth_session_hash");
ALTER TABLE "authorization_requests" ADD COLUMN "presentation_session_id" text;--> statement-breakpoint
ALTER TABLE "authorization_requests" ADD COLUMN "same_device_presentation_session_id" text;
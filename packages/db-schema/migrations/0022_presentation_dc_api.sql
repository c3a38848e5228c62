ALTER TABLE "presentation_configs" ADD COLUMN "dc_api" jsonb;--> statement-breakpoint
ALTER TABLE "presentation_sessions" ADD COLUMN "origin" text;--> statement-breakpoint
ALTER TABLE "presentation_sessions" ADD COLUMN "dc_api_protocols" text[];
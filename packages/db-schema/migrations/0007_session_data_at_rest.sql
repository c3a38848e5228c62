-- Offer claims and presentation results encrypted at rest (AES-256-GCM, key from MASTER_SECRET):
-- new rows fill the *_encrypted columns only. Clear values written before stay readable and are
-- encrypted by the management retention job, which has the key (SQL has not).
ALTER TABLE "issuance_sessions" ALTER COLUMN "claims" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "issuance_sessions" ADD COLUMN "claims_encrypted" text;--> statement-breakpoint
ALTER TABLE "presentation_sessions" ADD COLUMN "result_encrypted" text;

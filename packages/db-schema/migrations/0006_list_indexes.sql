-- IF NOT EXISTS (added by hand): operators of large tables may create these CONCURRENTLY first.
CREATE INDEX IF NOT EXISTS "audit_log_at" ON "audit_log" USING btree ("at","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "issuance_sessions_created" ON "issuance_sessions" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "issuance_sessions_expiry" ON "issuance_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "presentation_sessions_created" ON "presentation_sessions" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "presentation_sessions_expiry" ON "presentation_sessions" USING btree ("expires_at");
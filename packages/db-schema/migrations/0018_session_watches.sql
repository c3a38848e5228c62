CREATE TABLE "session_watches" (
	"session_id" text NOT NULL,
	"watcher_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "session_watches_session_id_watcher_id_pk" PRIMARY KEY("session_id","watcher_id")
);
--> statement-breakpoint
CREATE FUNCTION "notify_watched_session"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	changed text := CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END;
BEGIN
	IF EXISTS (SELECT 1 FROM "session_watches" WHERE "session_id" = changed AND "expires_at" > now()) THEN
		PERFORM pg_notify('credential_service_session_events', changed);
	END IF;
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "issuance_sessions_status_notify" AFTER UPDATE ON "issuance_sessions" FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status") EXECUTE FUNCTION "notify_watched_session"();--> statement-breakpoint
CREATE TRIGGER "issuance_sessions_delete_notify" AFTER DELETE ON "issuance_sessions" FOR EACH ROW EXECUTE FUNCTION "notify_watched_session"();--> statement-breakpoint
CREATE TRIGGER "presentation_sessions_status_notify" AFTER UPDATE ON "presentation_sessions" FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status") EXECUTE FUNCTION "notify_watched_session"();--> statement-breakpoint
CREATE TRIGGER "presentation_sessions_delete_notify" AFTER DELETE ON "presentation_sessions" FOR EACH ROW EXECUTE FUNCTION "notify_watched_session"();

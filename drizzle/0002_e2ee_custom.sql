-- trust_audit is append-only (spec §2.10, §7.8), enforced by the database itself:
-- statement-level triggers, so even an UPDATE or DELETE matching no row is refused.
CREATE FUNCTION trust_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'trust_audit is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
CREATE TRIGGER trust_audit_no_update_delete BEFORE UPDATE OR DELETE ON trust_audit
  FOR EACH STATEMENT EXECUTE FUNCTION trust_audit_append_only();
--> statement-breakpoint
CREATE TRIGGER trust_audit_no_truncate BEFORE TRUNCATE ON trust_audit
  FOR EACH STATEMENT EXECUTE FUNCTION trust_audit_append_only();

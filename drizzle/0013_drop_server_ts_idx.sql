-- Nothing reads messages by server_ts alone (the conversation list uses the per-side C2C indexes, prune and
-- offline pulls the time-ordered id): one index fewer on every message insert.
DROP INDEX IF EXISTS "messages_server_ts_idx";

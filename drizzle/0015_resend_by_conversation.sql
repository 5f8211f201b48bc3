-- A C2C or C2G id names one message in its conversation (messages_c2c_tsid_uq, messages_c2g_tsid_uq), and a resend
-- is found there: the per-sender index covers C2S and S2C only, one B-tree entry fewer per C2C and C2G insert.
DROP INDEX "messages_sender_client_id_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "messages_sender_client_id_uq" ON "messages" USING btree (coalesce("from_id", 0),"client_id") WHERE "messages"."chat_type" in ('C2S', 'S2C');

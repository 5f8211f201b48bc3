-- Each running node's watermark (src/delivery/floors.ts): floors move past what devices acknowledged up to the
-- least of them, so a reconnect's pending check walks what is unacknowledged, not every acknowledged message.
CREATE TABLE "writer_watermark" (
	"instance" text PRIMARY KEY NOT NULL,
	"low_id" bigint NOT NULL,
	"seen_at" bigint NOT NULL
);

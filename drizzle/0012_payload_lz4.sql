-- Message bodies compress with lz4 where the server has it (PostgreSQL built --with-lz4, as Debian's and the
-- official images are): pglz spent 140 ms of the database's CPU on one 16 MiB payload, lz4 73 ms, and up to 4x
-- less on text that compresses poorly (docs/storage.md). A server without lz4 (PGlite) keeps pglz.
DO $$
BEGIN
  ALTER TABLE "messages" ALTER COLUMN "payload" SET COMPRESSION lz4;
  ALTER TABLE "messages" ALTER COLUMN "e2ee" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 not available: message bodies keep pglz';
END $$;

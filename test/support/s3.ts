/**
 * A real S3-compatible server for tests: s3rver (npm, a dev dependency) on a
 * free loopback port with a scratch directory and one bucket. s3rver checks a
 * presigned URL's expiry but not its SigV4 signature (docs/operations.md says
 * what that leaves to Ibis).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import type { Config } from "../../src/config/index.ts";

export interface TestS3 {
  readonly config: Partial<Config>;
  readonly client: Bun.S3Client;
  stop(): Promise<void>;
}

export async function startS3(bucket = "ibis-test"): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), "ibis-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", directory: dir, silent: true, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  // s3rver's built-in account.
  const config = { s3Endpoint: `http://127.0.0.1:${port}`, s3Bucket: bucket, s3AccessKey: "S3RVER", s3SecretKey: "S3RVER", s3Region: "us-east-1" };
  return {
    config,
    client: new Bun.S3Client({ endpoint: config.s3Endpoint, bucket, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" }),
    async stop() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

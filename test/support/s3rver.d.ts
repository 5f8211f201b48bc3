/** The part of s3rver (no bundled types) the tests use. */
declare module "s3rver" {
  export default class S3rver {
    constructor(opts: {
      port: number;
      address: string;
      directory: string;
      silent?: boolean;
      configureBuckets?: { name: string; configs: unknown[] }[];
    });
    run(): Promise<{ port: number }>;
    close(): Promise<void>;
  }
}

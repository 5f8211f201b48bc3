/** Spec §2.2: the init content, shared by /api/v1/init (encrypted) and /api/v1/app/init (plain). */
export interface InitData {
  ws_url: string;
  upload_url: string;
  upload_key: string;
  upload_scene: string;
  login_pwd_rsa_encrypt: boolean;
  login_rsa_pub_key: string;
  attach_presign_endpoint: string;
}

export const ATTACH_PRESIGN_ENDPOINT = "/api/v1/attachment/presign";

export function initData(opts: {
  wsUrl: string;
  uploadUrl: string;
  rsaPublicKeyPem: string | undefined;
}): InitData {
  return {
    ws_url: opts.wsUrl,
    upload_url: opts.uploadUrl,
    // 1.0.0 (spec §9.6): both empty strings.
    upload_key: "",
    upload_scene: "",
    login_pwd_rsa_encrypt: opts.rsaPublicKeyPem !== undefined,
    login_rsa_pub_key: opts.rsaPublicKeyPem ?? "",
    attach_presign_endpoint: ATTACH_PRESIGN_ENDPOINT,
  };
}

/** The ws_url a node announces when IBIS_PUBLIC_WS_URL is empty (development): its own port, on localhost for a wildcard host. */
export function localWsUrl(host: string, port: number, tls: boolean): string {
  const h = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `${tls ? "wss" : "ws"}://${h}:${port}/ws`;
}

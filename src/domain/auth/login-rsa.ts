import { sharedSetting } from "../../db/settings.ts";
import type { Store } from "../../db/store.ts";
import { fail, ok, type Result } from "../errors.ts";

/**
 * Login password wrapping (spec §5.6, docs/auth.md): RSA-OAEP with SHA-256
 * (MGF1-SHA-256), 2048-bit key. The client encrypts the UTF-8 password with
 * the SPKI PEM published in init (`login_rsa_pub_key`) and sends the
 * ciphertext Base64-encoded as `pwd`.
 */
export interface LoginRsa {
  readonly publicKeyPem: string;
  unwrap(pwdBase64: string): Promise<Result<string>>;
}

const ALG = { name: "RSA-OAEP", hash: "SHA-256" } as const;
export const LOGIN_RSA_SETTING = "login.rsa_private_key";

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64").replace(/(.{64})/g, "$1\n").trimEnd();
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

function derOf(pemText: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(pemText.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, ""), "base64"));
}

export async function generateRsaPrivateKeyPem(): Promise<string> {
  const pair = await crypto.subtle.generateKey(
    { ...ALG, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["encrypt", "decrypt"],
  );
  return pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", pair.privateKey));
}

/** Builds the wrapper from a PKCS#8 PEM private key. */
export async function loginRsaFromPem(privatePem: string): Promise<LoginRsa> {
  const privateKey = await crypto.subtle.importKey("pkcs8", derOf(privatePem), ALG, true, ["decrypt"]);
  // The public half from the private JWK (n, e), exported as SPKI.
  const { n, e } = await crypto.subtle.exportKey("jwk", privateKey);
  const publicKey = await crypto.subtle.importKey("jwk", { kty: "RSA", n, e, alg: "RSA-OAEP-256", ext: true }, ALG, true, [
    "encrypt",
  ]);
  const publicKeyPem = pem("PUBLIC KEY", await crypto.subtle.exportKey("spki", publicKey));
  return {
    publicKeyPem,
    async unwrap(pwdBase64) {
      try {
        const plain = await crypto.subtle.decrypt(ALG, privateKey, Buffer.from(pwdBase64, "base64"));
        return ok(new TextDecoder("utf-8", { fatal: true }).decode(plain));
      } catch {
        return fail("bad_request", "pwd is not a valid RSA-OAEP-SHA256 ciphertext for the published key");
      }
    },
  };
}

/** The configured key, or one generated once and shared by every node through the database. */
export async function loadLoginRsa(configuredPem: string, store: Store): Promise<LoginRsa> {
  return loginRsaFromPem(configuredPem || (await sharedSetting(store, LOGIN_RSA_SETTING, generateRsaPrivateKeyPem)));
}

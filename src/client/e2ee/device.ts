/**
 * The client side of the server's E2EE endpoints (docs/e2ee.md): a device's
 * identity, its key registration, peers' keys with trust-on-first-use, signed
 * trust events, the verification QR and safety number, incoming key changes,
 * and social-recovery shards. WebCrypto and fetch only, so it runs in browsers.
 */
import { fromBase64, toBase64 } from "../../protocol/base64.ts";
import {
  deviceKeyBytes,
  importWrapKey,
  RSA_OAEP_256,
  seal,
  trustEventBytes,
  verifyEd25519Base64,
  type DeviceKeyFields,
  type DeviceKeysView,
  type TrustEventFields,
} from "../../protocol/e2ee.ts";
import { stringifyJson } from "../../protocol/json.ts";
import type { ImMessage } from "../../model/message.ts";
import { newMessageId } from "../connection.ts";
import type { IbisApi } from "../rest.ts";
import type { TrustEventMethod } from "../../model/trust.ts";
import { checkQr, qrSignedBytes, type VerificationQr } from "./qr.ts";
import { safetyNumber } from "./safety-number.ts";
import { splitSecret } from "./shamir.ts";
import { applyTrust, type TrustRecord, type TrustTrigger } from "./trust.ts";

/** One device's key pairs. Private keys never leave it. */
export interface DeviceIdentity {
  readonly uid: bigint;
  readonly deviceId: string;
  readonly ed25519: CryptoKeyPair;
  readonly x25519: CryptoKeyPair;
  /** RSA-OAEP-256: messages (§2.8) are wrapped to its public half. */
  readonly wrap: CryptoKeyPair;
  /** The Base64 public halves as published. */
  readonly published: Pick<DeviceKeyFields, "ed25519" | "curve25519" | "wrap_key">;
}

export async function generateIdentity(uid: bigint, deviceId: string): Promise<DeviceIdentity> {
  const ed25519 = (await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"])) as unknown as CryptoKeyPair;
  const x25519 = (await crypto.subtle.generateKey({ name: "X25519" }, false, ["deriveBits"])) as unknown as CryptoKeyPair;
  const wrap = await crypto.subtle.generateKey({ ...RSA_OAEP_256, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, false, [
    "encrypt",
    "decrypt",
  ]);
  const raw = async (k: CryptoKey, format: "raw" | "spki") => toBase64(new Uint8Array(await crypto.subtle.exportKey(format, k)));
  return {
    uid,
    deviceId,
    ed25519,
    x25519,
    wrap,
    published: { ed25519: await raw(ed25519.publicKey, "raw"), curve25519: await raw(x25519.publicKey, "raw"), wrap_key: await raw(wrap.publicKey, "spki") },
  };
}

async function sign(identity: DeviceIdentity, bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return toBase64(new Uint8Array(await crypto.subtle.sign("Ed25519", identity.ed25519.privateKey, bytes)));
}

const bundleFields = (identity: DeviceIdentity): DeviceKeyFields => ({ uid: identity.uid, device_id: identity.deviceId, ...identity.published });

/** The key bundle as registered: the public keys and the identity key's signature over them. */
export async function signedBundle(identity: DeviceIdentity) {
  return { ...identity.published, key_signature: await sign(identity, deviceKeyBytes(bundleFields(identity))) };
}

/** The actor_signature of a trust event (layout: src/protocol/e2ee.ts). */
export function signTrustEvent(identity: DeviceIdentity, event: Omit<TrustEventFields, "actor_uid" | "actor_device_id">): Promise<string> {
  return sign(identity, trustEventBytes({ ...event, actor_uid: identity.uid, actor_device_id: identity.deviceId }));
}

/**
 * The verification QR of this device (§2.10). identity_blob is the canonical key bundle and identity_signature
 * its key_signature, so a scanner that trusts the QR has checked the same bytes the server checked.
 */
export async function buildQr(identity: DeviceIdentity): Promise<string> {
  const blob = deviceKeyBytes(bundleFields(identity));
  const base = { v: 1 as const, uid: identity.uid, device_id: identity.deviceId, ed25519: identity.published.ed25519, curve25519: identity.published.curve25519 };
  return stringifyJson({
    ...base,
    identity_blob: toBase64(blob),
    identity_signature: await sign(identity, blob),
    sig: await sign(identity, qrSignedBytes(base)),
  });
}

/** A peer device's keys as the server lists them (GET /api/v1/e2ee/devices). */
export type PeerDevice = DeviceKeysView;

/** custom_type of the "I verified you" C2C message (§3.1, §4.6): it carries the sender's own QR so the peer may verify back. */
export const VERIFIED_YOU = "e2ee_verified_you";

/** The "I verified you" message to send after markVerified (through IbisConnection.send). */
export async function verifiedYouMessage(identity: DeviceIdentity, peerUid: bigint): Promise<ImMessage> {
  return {
    id: newMessageId("C2C"),
    type: "C2C",
    from: identity.uid,
    to: peerUid,
    msg_type: "custom",
    payload: { custom_type: VERIFIED_YOU, qr: await buildQr(identity) },
    server_ts: 0,
  };
}

/** The QR text inside a received "I verified you" message; undefined for any other message. */
export function verifiedYouQr(msg: Record<string, any>): string | undefined {
  const p = msg.payload;
  return msg.msg_type === "custom" && p?.custom_type === VERIFIED_YOU && typeof p.qr === "string" ? p.qr : undefined;
}

/** What a key-change notice did to the local trust store. */
export interface KeyChange {
  readonly previous: TrustRecord | undefined;
  readonly record: TrustRecord;
}

/** The E2EE side of one signed-in device: calls the REST endpoints and keeps the local trust store (§2.10). */
export class E2eeClient {
  readonly #trust = new Map<string, TrustRecord>();

  /** `api` carries the device's token (and request signing when the server wants it). */
  constructor(
    readonly identity: DeviceIdentity,
    private readonly api: IbisApi,
    private readonly now: () => number = Date.now,
  ) {}

  #call<T = any>(method: "GET" | "POST", path: string, body?: Record<string, unknown>): Promise<T> {
    return this.api.call<T>(method, path, body);
  }

  /** The local trust record of a peer device. */
  trustOf(uid: bigint, deviceId: string): TrustRecord | undefined {
    return this.#trust.get(`${uid}/${deviceId}`);
  }

  #apply(uid: bigint, deviceId: string, ed25519: string, trigger: TrustTrigger): TrustRecord {
    const record = applyTrust(this.trustOf(uid, deviceId) ?? null, trigger, { uid, deviceId, ed25519 }, this.now());
    this.#trust.set(`${uid}/${deviceId}`, record);
    return record;
  }

  /** Publishes (or rotates to) this device's keys; answers the key version. */
  async registerKeys(): Promise<{ key_version: number; identity_changed: boolean }> {
    return this.#call("POST", "/api/v1/e2ee/device_keys", await signedBundle(this.identity));
  }

  /**
   * A user's devices with published keys whose self-signature verifies; each new identity is trusted on first
   * sight (unverified), a changed one goes through `keyChanged`.
   */
  async devicesOf(uid: bigint): Promise<PeerDevice[]> {
    const { list } = await this.#call<{ list: PeerDevice[] }>("GET", `/api/v1/e2ee/devices?user_id=${uid}`);
    const good: PeerDevice[] = [];
    for (const d of list) {
      if (uid === this.identity.uid && d.device_id === this.identity.deviceId) continue;
      if (!(await this.#bundleVerifies(uid, d))) continue;
      const known = this.trustOf(uid, d.device_id);
      if (!known) this.#apply(uid, d.device_id, d.ed25519, { kind: "first_sight" });
      else if (known.peer_ed25519 !== d.ed25519) this.#changeIdentity(uid, d.device_id, d.ed25519);
      good.push(d);
    }
    return good;
  }

  #bundleVerifies(uid: bigint, d: Pick<PeerDevice, "device_id" | "ed25519" | "curve25519" | "wrap_key" | "key_signature">): Promise<boolean> {
    try {
      return verifyEd25519Base64(d.ed25519, d.key_signature, deviceKeyBytes({ uid, ...d }));
    } catch {
      return Promise.resolve(false);
    }
  }

  /** §3.1 only lets a new identity follow revocation: an identity that changes under a live record is revoked locally first. */
  #changeIdentity(uid: bigint, deviceId: string, ed25519: string): KeyChange {
    const previous = this.trustOf(uid, deviceId);
    if (previous && previous.trust_state !== "revoked") this.#apply(uid, deviceId, previous.peer_ed25519, { kind: "revoke" });
    const record = previous ? this.#apply(uid, deviceId, ed25519, { kind: "identity_changed" }) : this.#apply(uid, deviceId, ed25519, { kind: "first_sight" });
    return { previous, record };
  }

  /**
   * An `e2ee_device_key_changed` notice: its bundle must verify under the new key (else it is ignored and undefined
   * returned); the device then starts over as unverified. The UI shows the key-changed alert from the result.
   */
  async keyChanged(payload: Record<string, any>): Promise<KeyChange | undefined> {
    const uid = BigInt(payload.user_id ?? payload.uid);
    if (!(await this.#bundleVerifies(uid, payload as PeerDevice))) return undefined;
    return this.#changeIdentity(uid, payload.device_id, payload.ed25519);
  }

  /** The safety number between this device and a known peer device (§2.11). */
  safetyNumberWith(uid: bigint, deviceId: string): Promise<string> {
    const peer = this.trustOf(uid, deviceId);
    if (!peer) throw new RangeError("unknown peer device: list its keys first");
    return safetyNumber(
      { uid: this.identity.uid, deviceId: this.identity.deviceId, ed25519: fromBase64(this.identity.published.ed25519)! },
      { uid, deviceId, ed25519: fromBase64(peer.peer_ed25519)! },
    );
  }

  qr(): Promise<string> {
    return buildQr(this.identity);
  }

  /**
   * Scans a peer's QR (§4.6 procedure 1): both signatures must verify and the QR's key must be the one the server
   * lists for that device; then markVerified. Throws on an invalid or tampered code.
   */
  async scanQr(text: string): Promise<TrustRecord> {
    const check = await checkQr(text);
    if (!check.ok) throw new Error(`QR code is ${check.reason}`);
    const qr: VerificationQr = check.qr;
    await this.devicesOf(qr.uid);
    const known = this.trustOf(qr.uid, qr.device_id);
    if (!known || known.peer_ed25519 !== qr.ed25519) throw new Error("QR code is tampered: its key is not the device's registered key");
    return this.markVerified(qr.uid, qr.device_id, "qr_scan");
  }

  /** unverified → verified by QR or by a confirmed safety number: local record, then the signed event (§3.1). */
  markVerified(uid: bigint, deviceId: string, method: "qr_scan" | "manual_number"): Promise<TrustRecord> {
    return this.#transition(uid, deviceId, { kind: "verify", method }, method);
  }

  revoke(uid: bigint, deviceId: string): Promise<TrustRecord> {
    return this.#transition(uid, deviceId, { kind: "revoke" }, "revoke");
  }

  /** Destroys one of the user's own devices: user_device.status -1 and trust_state revoked on the server. */
  destroyOwnDevice(deviceId: string): Promise<TrustRecord> {
    return this.#transition(this.identity.uid, deviceId, { kind: "device_destroyed" }, "device_destroyed");
  }

  async #transition(uid: bigint, deviceId: string, trigger: TrustTrigger, method: TrustEventMethod): Promise<TrustRecord> {
    const before = this.trustOf(uid, deviceId);
    if (!before) throw new RangeError("unknown peer device: list its keys first");
    const after = applyTrust(before, trigger, { uid, deviceId, ed25519: before.peer_ed25519 }, this.now());
    await this.sendTrustEvent({ target_uid: uid, target_device_id: deviceId, target_ed25519: before.peer_ed25519, from_state: before.trust_state, to_state: after.trust_state, method });
    this.#trust.set(`${uid}/${deviceId}`, after);
    return after;
  }

  /** Signs and submits one trust event; ts is now, and at least 1 ms after this device's previous one. */
  async sendTrustEvent(e: Omit<TrustEventFields, "actor_uid" | "actor_device_id" | "ts">): Promise<Record<string, unknown>> {
    const ts = (this.#lastTs = Math.max(this.now(), this.#lastTs + 1));
    return this.#call("POST", "/api/v1/e2ee/trust_event", { ...e, ts, actor_signature: await signTrustEvent(this.identity, { ...e, ts }) });
  }
  #lastTs = 0;

  /**
   * Splits `secret` into one Shamir share per proxy (any `threshold` recover it), seals each share to that
   * proxy's key (fetched from the server) and stores the set for `keyVersion`.
   */
  async createShards(secret: Uint8Array, keyVersion: number, threshold: number, proxies: readonly bigint[]): Promise<Record<string, any>> {
    const { list } = await this.#call<{ list: { user_id: bigint; public_key: string }[] }>(
      "GET",
      `/api/v1/e2ee/social/proxy_keys?user_ids=${proxies.join(",")}`,
    );
    const shares = splitSecret(secret, proxies.length, threshold);
    const shards = await Promise.all(
      proxies.map(async (proxy, i) => {
        const key = await importWrapKey(list.find((k) => BigInt(k.user_id) === proxy)!.public_key);
        if (!key) throw new Error("the server answered a malformed proxy key");
        const box = await seal(key, new TextEncoder().encode(toBase64(shares[i]!)));
        return { proxy_uid: proxy, encrypted_shard: toBase64(box) };
      }),
    );
    return this.#call("POST", "/api/v1/e2ee/social/create_shards", { key_version: keyVersion, threshold, shards });
  }

  ownShards(keyVersion: number): Promise<{ list: Record<string, any>[] }> {
    return this.#call("GET", `/api/v1/e2ee/social/shards?key_version=${keyVersion}`);
  }

  proxyShards(): Promise<{ list: Record<string, any>[] }> {
    return this.#call("GET", "/api/v1/e2ee/social/proxy_shards");
  }

  /** As a proxy: the share held in one shard (Base64), to hand back to its owner. */
  async decryptShard(shardId: string): Promise<string> {
    return (await this.#call<{ decrypted_shard: string }>("POST", "/api/v1/e2ee/social/decrypt_shard", { shard_id: shardId })).decrypted_shard;
  }
}

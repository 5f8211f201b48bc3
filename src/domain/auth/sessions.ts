/**
 * Device sessions (docs/auth.md "Revocation"): one row per (user, device) in
 * auth_session. Every token carries the session's generation `gen`; a token
 * of an older generation is refused by the check behind every token
 * (liveness.ts). Revoking = bumping `gen`, one statement whatever the number
 * of tokens out there. Refresh tokens rotate: only the session's current one
 * (`refresh_jti`) is accepted, and presenting an older one of the live
 * generation is reuse — the session is revoked (the thief and the owner both
 * sign in again).
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { authSessions, userDevices } from "../../db/schema/index.ts";
import { FixedStatement, type Bound } from "../../db/statement.ts";
import { arrayLiteral, type Store } from "../../db/store.ts";
import type { LivenessSource, SessionFact, SessionKey } from "./liveness.ts";
import type { TokenClaims, TokenPair, TokenService } from "./tokens.ts";

/** Why a refresh was refused: "reused" revoked the session on the way (its sockets must be closed). */
export type RefreshRefusal = { readonly reason: "revoked" | "suspended" | "gone" } | { readonly reason: "reused"; readonly gen: number };

/**
 * DeviceSessions.sessionsAmong's statement (exported for its plan test): one row
 * per key by `ord`; `deleted` is null when the account does not exist ("gone"). Each lookup is a lateral subquery behind `offset 0`, a
 * primary-key probe per key whatever the statistics say: as plain joins, an
 * unanalyzed users table (a fresh deployment, a signup burst) was hashed whole
 * for every batch of handshakes.
 */
export function sessionsAmongQuery(keys: readonly SessionKey[]): SQL {
  return sessionsAmongSql(...sessionsAmongArgs(keys));
}

/** sessionsAmongQuery's text, compiled once (it never varies), and its two array parameters for `keys`. */
export function sessionsAmongStatement(keys: readonly SessionKey[]): Bound {
  return SESSIONS_AMONG.bind(...sessionsAmongArgs(keys));
}

const SESSIONS_AMONG = new FixedStatement<[string, string]>((u, d) => sessionsAmongSql(u, d), 2);

/** Users, devices. */
const sessionsAmongArgs = (keys: readonly SessionKey[]): [string, string] => [
  arrayLiteral(keys.map((k) => k.userId.toString())),
  arrayLiteral(keys.map((k) => k.deviceId)),
];

function sessionsAmongSql(users: unknown, devices: unknown): SQL {
  return sql`
    select r.ord, case when u.id is null then null else u.deleted_at is not null end as deleted,
      u.suspended_at is not null as suspended, s.gen
    from unnest(${users}::bigint[], ${devices}::text[]) with ordinality as r(user_id, device_id, ord)
    left join lateral (select u.id, u.deleted_at, u.suspended_at from users u where u.id = r.user_id offset 0) u on true
    left join lateral (select s.gen from ${authSessions} s where s.user_id = r.user_id and s.device_id = r.device_id offset 0) s on true`;
}

export class DeviceSessions implements LivenessSource {
  constructor(
    private readonly store: Store,
    private readonly tokens: TokenService,
    private readonly now: () => number,
  ) {}

  /** A login: the device's session (created, or its current generation kept) gets a new token pair. */
  async start(userId: bigint, deviceId: string): Promise<TokenPair> {
    const jti = crypto.randomUUID();
    const t = this.now();
    const [row] = await this.store.db
      .insert(authSessions)
      .values({ userId, deviceId, refreshJti: jti, createdAt: t, updatedAt: t })
      .onConflictDoUpdate({ target: [authSessions.userId, authSessions.deviceId], set: { refreshJti: jti, updatedAt: t } })
      .returning({ gen: authSessions.gen });
    return this.tokens.pair(userId, deviceId, row!.gen, jti);
  }

  /**
   * Rotates a verified refresh token: succeeds only for the session's current
   * one, in one conditional update (two concurrent refreshes with the same
   * token: one wins, the other is reuse).
   */
  async refresh(claims: TokenClaims): Promise<{ readonly ok: true; readonly pair: TokenPair } | { readonly ok: false; readonly refusal: RefreshRefusal }> {
    const { userId, deviceId, gen } = claims;
    const jti = crypto.randomUUID();
    const t = this.now();
    const rows = await this.store.rows<{ ok: boolean; gen: number | null; deleted: boolean; suspended: boolean }>(sql`
      with rotated as (
        update ${authSessions} set refresh_jti = ${jti}, updated_at = ${t}
        where user_id = ${userId} and device_id = ${deviceId} and gen = ${gen} and refresh_jti = ${claims.jti}
          and exists (select 1 from users where id = ${userId} and deleted_at is null and suspended_at is null)
        returning gen)
      select exists (select 1 from rotated) as ok,
        (select gen from ${authSessions} where user_id = ${userId} and device_id = ${deviceId}) as gen,
        coalesce((select deleted_at is not null from users where id = ${userId}), true) as deleted,
        coalesce((select suspended_at is not null from users where id = ${userId}), false) as suspended`);
    const r = rows[0]!;
    if (r.ok) {
      await this.#touch(userId, deviceId, t);
      return { ok: true, pair: await this.tokens.pair(userId, deviceId, gen, jti) };
    }
    if (r.deleted) return { ok: false, refusal: { reason: "gone" } };
    if (r.suspended) return { ok: false, refusal: { reason: "suspended" } };
    // The live generation but not its current token: an old refresh token came back. Revoke the session.
    if (r.gen !== null && Number(r.gen) === gen && claims.jti !== "") {
      const bumped = await this.revoke(userId, deviceId, gen);
      if (bumped !== undefined) return { ok: false, refusal: { reason: "reused", gen: bumped } };
    }
    return { ok: false, refusal: { reason: "revoked" } };
  }

  /**
   * Signs a device out: its generation goes up (every token of it is refused)
   * and no refresh token of it is accepted. With `onlyGen`, only when the
   * session is still at that generation (reuse detection racing a sign-out).
   * Returns the new generation; undefined when `onlyGen` no longer matched.
   */
  async revoke(userId: bigint, deviceId: string, onlyGen?: number): Promise<number | undefined> {
    const t = this.now();
    const rows = await this.store.db
      .insert(authSessions)
      .values({ userId, deviceId, gen: 1, refreshJti: null, createdAt: t, updatedAt: t })
      .onConflictDoUpdate({
        target: [authSessions.userId, authSessions.deviceId],
        set: { gen: sql`${authSessions.gen} + 1`, refreshJti: null, updatedAt: t },
        ...(onlyGen === undefined ? {} : { setWhere: eq(authSessions.gen, onlyGen) }),
      })
      .returning({ gen: authSessions.gen });
    return rows[0]?.gen;
  }

  /**
   * Every session of the user (suspension): the rows there are, plus the
   * devices the user registered and the device-less session, so tokens
   * issued before sessions existed are revoked too.
   */
  async revokeAll(userId: bigint): Promise<void> {
    const t = this.now();
    await this.store.rows(sql`
      insert into ${authSessions} (user_id, device_id, gen, refresh_jti, created_at, updated_at)
      select ${userId}, d, 1, null, ${t}, ${t} from (
        select device_id as d from ${userDevices} where user_id = ${userId}
        union select device_id from ${authSessions} where user_id = ${userId}
        union select '') x
      on conflict (user_id, device_id) do update set gen = ${authSessions}.gen + 1, refresh_jti = null, updated_at = ${t}`);
  }

  /** Is the device signed in (a session with a usable refresh token)? By device id, for the user's devices. */
  async signedIn(userId: bigint): Promise<Set<string>> {
    const rows = await this.store.db
      .select({ deviceId: authSessions.deviceId })
      .from(authSessions)
      .where(and(eq(authSessions.userId, userId), sql`${authSessions.refreshJti} is not null`));
    return new Set(rows.map((r) => r.deviceId));
  }

  async sessionsAmong(keys: readonly SessionKey[]): Promise<readonly SessionFact[]> {
    const { text, params } = sessionsAmongStatement(keys);
    const rows = await this.store.query<{ ord: number | string; deleted: boolean | null; suspended: boolean | null; gen: number | null }>(text, params);
    const out: SessionFact[] = new Array(keys.length).fill("gone");
    for (const r of rows) {
      if (r.deleted === null || r.deleted) continue;
      out[Number(r.ord) - 1] = r.suspended ? "suspended" : Number(r.gen ?? 0);
    }
    return out;
  }

  /** A refresh counts as the device being seen. */
  async #touch(userId: bigint, deviceId: string, t: number): Promise<void> {
    if (deviceId === "") return;
    await this.store.db
      .update(userDevices)
      .set({ lastSeenAt: t })
      .where(and(eq(userDevices.userId, userId), eq(userDevices.deviceId, deviceId)));
  }
}

/**
 * The chat page served at /app (docs/client.md): plain DOM over the SDK, so
 * it uses nothing but the public REST and WebSocket API. State that the
 * server does not keep for a client — unread counts, open friend requests —
 * lives in localStorage per user.
 */
import { IbisApiError, IbisClient, IbisSendError, type Session, type WireMessage } from "../src/client/sdk.ts";

type ConvType = "c2c" | "c2g";
interface Conv {
  readonly key: string;
  readonly type: ConvType;
  readonly id: bigint;
  title: string;
  last?: WireMessage;
  unread: number;
  /** By message id; history is loaded the first time the conversation opens. */
  readonly messages: Map<string, Shown>;
  loaded: boolean;
}
interface Shown {
  readonly msg: WireMessage;
  status: "sending" | "sent" | "failed";
  error?: string;
}

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls = "", text = ""): HTMLElementTagNameMap[K] => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text) e.textContent = text;
  return e;
};
const str = (v: unknown) => String(v ?? "");
const keyOf = (type: ConvType, id: unknown) => `${type}:${str(id)}`;
const store = {
  get<T>(k: string, fallback: T): T {
    try {
      return (JSON.parse(localStorage.getItem(k) ?? "null") as T) ?? fallback;
    } catch {
      return fallback;
    }
  },
  set(k: string, v: unknown): void {
    localStorage.setItem(k, JSON.stringify(v));
  },
};

// ---- session ---------------------------------------------------------------------

const deviceId = store.get("ibis.device", "") || `web-${crypto.randomUUID().slice(0, 12)}`;
store.set("ibis.device", deviceId);

const saved = store.get<(Omit<Session, "userId"> & { userId: string }) | null>("ibis.session", null);
const client = new IbisClient({
  url: location.origin,
  deviceId,
  deviceType: "web",
  ...(saved ? { session: { ...saved, userId: BigInt(saved.userId) } } : {}),
  onSession: (s) => (s ? store.set("ibis.session", { ...s, userId: str(s.userId) }) : localStorage.removeItem("ibis.session")),
});
const api = client.api;
const me = () => api.session!.userId;

// ---- state -------------------------------------------------------------------------

const convs = new Map<string, Conv>();
const names = new Map<string, string>(); // user id → nickname (friends, group members)
let active: Conv | undefined;
let unreadSaved: Record<string, number> = {};
let requests: { uid: string; nickname: string }[] = [];

const perUser = (k: string) => `ibis.${k}.${str(me())}`;
const saveUnread = () => {
  unreadSaved = Object.fromEntries([...convs.values()].filter((c) => c.unread > 0).map((c) => [c.key, c.unread]));
  store.set(perUser("unread"), unreadSaved);
};

function conv(type: ConvType, id: unknown, title?: string): Conv {
  const key = keyOf(type, id);
  let c = convs.get(key);
  if (!c) {
    c = { key, type, id: BigInt(str(id)), title: "", unread: unreadSaved[key] ?? 0, messages: new Map(), loaded: false };
    convs.set(key, c);
  }
  c.title = title ?? (c.title || (type === "c2c" ? names.get(str(id)) ?? `User ${str(id)}` : `Group ${str(id)}`));
  return c;
}

/** The conversation a message belongs to, from this user's side. */
function convOf(m: WireMessage): Conv | undefined {
  if (m.type === "C2G") return conv("c2g", m.to);
  if (m.type !== "C2C") return undefined;
  return conv("c2c", str(m.from) === str(me()) ? m.to : m.from);
}

function take(m: WireMessage, status: Shown["status"] = "sent"): Conv | undefined {
  const c = convOf(m);
  if (!c) return undefined;
  const known = c.messages.get(m.id);
  if (known) known.status = status;
  else c.messages.set(m.id, { msg: m, status });
  if (!c.last || Number(m.server_ts ?? 0) >= Number(c.last.server_ts ?? 0)) c.last = m;
  return c;
}

// ---- rendering -------------------------------------------------------------------

const STATE_TEXT = { connecting: "connecting…", online: "online", offline: "offline", stopped: "offline" } as const;

function renderConvs(): void {
  const list = [...convs.values()].sort((a, b) => Number(b.last?.server_ts ?? 0) - Number(a.last?.server_ts ?? 0));
  $("convs").replaceChildren(
    ...list.map((c) => {
      const li = el("li", c === active ? "active" : "");
      li.dataset.conv = c.key;
      const text = el("div", "text");
      text.append(el("span", "name", c.title), el("span", "preview", c.last ? preview(c.last) : c.type === "c2g" ? "group" : "friend"));
      li.append(text, el("span", "badge", c.unread ? String(c.unread) : ""));
      li.onclick = () => void open(c);
      return li;
    }),
  );
}

function preview(m: WireMessage): string {
  const text = typeof m.payload === "object" ? str(m.payload?.text ?? m.payload?.content) : "(encrypted)";
  return str(m.from) === str(me()) ? `You: ${text}` : text;
}

function renderMessages(): void {
  if (!active) return;
  const box = $("messages");
  const sorted = [...active.messages.values()].sort((a, b) => Number(a.msg.server_ts || Infinity) - Number(b.msg.server_ts || Infinity));
  box.replaceChildren(
    ...sorted.map(({ msg, status, error }) => {
      const mine = str(msg.from) === str(me());
      const li = el("li", `msg${mine ? " mine" : ""}${status === "failed" ? " failed" : ""}`);
      if (!mine && active!.type === "c2g") li.append(el("div", "who", names.get(str(msg.from)) ?? `User ${str(msg.from)}`));
      li.append(el("div", "body", preview({ ...msg, from: "" })));
      const when = msg.server_ts ? new Date(Number(msg.server_ts)).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "";
      li.append(el("div", "meta", status === "sent" ? when : status === "sending" ? "sending…" : `not sent: ${error ?? ""}`));
      return li;
    }),
  );
  box.scrollTop = box.scrollHeight;
}

function renderRequests(): void {
  $("requests").replaceChildren(
    ...requests.map((r) => {
      const li = el("li");
      li.append(el("span", "", `${r.nickname} wants to be friends`));
      const accept = el("button", "", "Accept");
      accept.onclick = () =>
        void guard(async () => {
          await api.confirmFriend(BigInt(r.uid));
          dropRequest(r.uid);
          await loadFriends();
        });
      li.append(accept);
      return li;
    }),
  );
}

function renderGroupPicker(): void {
  const friends = [...convs.values()].filter((c) => c.type === "c2c");
  $("group-members").replaceChildren(
    ...friends.map((c) => {
      const label = el("label");
      const box = el("input");
      box.type = "checkbox";
      box.value = str(c.id);
      label.append(box, c.title);
      return label;
    }),
  );
}

const render = () => (renderConvs(), renderMessages());

// ---- actions ---------------------------------------------------------------------

async function guard(f: () => Promise<unknown>): Promise<void> {
  $("side-error").textContent = "";
  try {
    await f();
  } catch (e) {
    $("side-error").textContent = e instanceof IbisApiError ? `${e.message} (${e.code})` : String(e);
  }
}

async function open(c: Conv): Promise<void> {
  active = c;
  c.unread = 0;
  saveUnread();
  $("conv-title").textContent = c.title;
  $("composer").hidden = false;
  render();
  if (!c.loaded) {
    c.loaded = true;
    if (c.type === "c2g") {
      const members = await api.members(c.id);
      for (const m of members.list) names.set(str(m.user_id), m.nickname);
    }
    const { list } = await api.history(c.type, c.id);
    for (const m of list) take(m);
    render();
  }
  if (c.type === "c2c" && c.last) api.read(c.id, c.last.id).catch(() => undefined);
}

async function loadFriends(): Promise<void> {
  for (const f of await api.friends()) {
    names.set(str(f.user_id), f.nickname);
    conv("c2c", f.user_id, f.nickname);
  }
  renderGroupPicker();
  renderConvs();
}

async function loadGroups(): Promise<void> {
  for (const attr of ["owner", "join"] as const) for (const g of (await api.groups(attr)).list) conv("c2g", g.group_id, g.title);
  renderConvs();
}

function dropRequest(uid: string): void {
  requests = requests.filter((r) => r.uid !== uid);
  store.set(perUser("requests"), requests);
  renderRequests();
}

async function showChat(): Promise<void> {
  const s = api.session!;
  $("auth").hidden = true;
  $("chat").hidden = false;
  $("logout").hidden = false;
  $("me").textContent = s.nickname || s.account;
  $("my-id").textContent = str(s.userId);
  unreadSaved = store.get(perUser("unread"), {});
  requests = store.get(perUser("requests"), []);
  renderRequests();
  client.start();
  await guard(async () => {
    await Promise.all([loadFriends(), loadGroups()]);
    for (const c of await api.conversations()) {
      const known = convOf(c.last_msg) ?? conv(c.conversation_type, c.conversation_id);
      if (!known.last || Number(c.last_msg.server_ts) > Number(known.last.server_ts)) known.last = c.last_msg;
    }
    renderConvs();
  });
}

function showAuth(): void {
  $("auth").hidden = false;
  $("chat").hidden = true;
  $("logout").hidden = true;
  $("me").textContent = "";
}

// ---- events ------------------------------------------------------------------------

client.on("state", (s) => {
  const conn = $("conn");
  conn.dataset.state = s.state;
  conn.textContent = s.state === "offline" && s.retryInMs ? `offline, retrying in ${Math.ceil(s.retryInMs / 1000)} s` : STATE_TEXT[s.state];
  if (s.state === "stopped" && !api.session) showAuth();
});

client.on("message", (m) => {
  const c = take(m);
  if (!c) return;
  if (c === active && document.visibilityState === "visible") {
    if (c.type === "c2c") api.read(c.id, m.id).catch(() => undefined);
  } else if (str(m.from) !== str(me())) {
    c.unread++;
    saveUnread();
  }
  if (c.type === "c2g" && c.title.startsWith("Group ")) void loadGroups();
  render();
});

client.on("notice", (m) => {
  const p = m.payload ?? {};
  switch (m.action) {
    case "apply_friend":
      if (!requests.some((r) => r.uid === str(p.user_id))) requests.push({ uid: str(p.user_id), nickname: str(p.nickname) });
      store.set(perUser("requests"), requests);
      renderRequests();
      break;
    case "apply_friend_confirm":
      void loadFriends();
      break;
    case "group_member_join":
    case "group_member_leave":
    case "group_dissolve":
      void loadGroups();
      break;
  }
});

$("auth-form").onsubmit = (ev) => {
  ev.preventDefault();
  const form = ev.target as HTMLFormElement;
  const data = new FormData(form);
  const signup = (ev as SubmitEvent).submitter?.getAttribute("name") === "signup";
  const account = str(data.get("account"));
  const pwd = str(data.get("pwd"));
  $("auth-error").textContent = "";
  (signup ? api.signup(account, pwd, str(data.get("nickname")) || undefined) : api.login(account, pwd)).then(
    () => void showChat(),
    (e: unknown) => ($("auth-error").textContent = e instanceof IbisApiError ? e.message : String(e)),
  );
};

$("logout").onclick = () => {
  client.signOut();
  convs.clear();
  active = undefined;
  $("messages").replaceChildren();
  $("conv-title").textContent = "Pick a conversation";
  showAuth();
};

$("add-friend").onsubmit = (ev) => {
  ev.preventDefault();
  const form = ev.target as HTMLFormElement;
  const uid = str(new FormData(form).get("uid")).trim();
  void guard(async () => {
    if (!/^\d+$/.test(uid)) throw new Error("a user id is a number");
    await api.addFriend(BigInt(uid));
    form.reset();
    $("side-error").textContent = "Request sent.";
  });
};

$("new-group").onsubmit = (ev) => {
  ev.preventDefault();
  const form = ev.target as HTMLFormElement;
  const title = str(new FormData(form).get("title"));
  const ids = [...form.querySelectorAll<HTMLInputElement>("input[type=checkbox]:checked")].map((b) => BigInt(b.value));
  void guard(async () => {
    const g = await api.createGroup(title, ids);
    form.reset();
    (form.parentElement as HTMLDetailsElement).open = false;
    void open(conv("c2g", g.group_id, g.title));
  });
};

$("composer").onsubmit = (ev) => {
  ev.preventDefault();
  const form = ev.target as HTMLFormElement;
  const text = str(new FormData(form).get("text"));
  const c = active;
  if (!c || !text) return;
  form.reset();
  const type = c.type === "c2c" ? "C2C" : "C2G";
  const sending = client.sendText(type, c.id, text);
  // Local echo until the SERVER_ACK gives it its stored time.
  const echo: WireMessage = { id: sending.id, type, from: me(), to: c.id, payload: { text }, server_ts: 0 };
  take(echo, "sending");
  render();
  sending.then(
    (ack) => {
      c.messages.set(echo.id, { msg: { ...echo, server_ts: ack.server_ts }, status: "sent" });
      c.last = c.messages.get(echo.id)!.msg;
      render();
    },
    (e: unknown) => {
      const shown = c.messages.get(echo.id)!;
      shown.status = "failed";
      shown.error = e instanceof IbisSendError ? e.action : String(e);
      render();
    },
  );
};

if (api.session) void showChat();
else showAuth();

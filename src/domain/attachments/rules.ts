/** Attachment rules without I/O: file names, object keys, content types. */

const NAME_MAX = 100;

/** A name safe in an object key and a Content-Disposition: letters, digits, `._-`; the extension kept. */
export function sanitizeFilename(raw: string): string {
  const base = raw.replace(/\\/g, "/").split("/").pop() ?? "";
  let name = base
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // accents go, the letters stay
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^[._]+/, "")
    .replace(/[._]+$/, "");
  if (name.length > NAME_MAX) {
    const dot = name.lastIndexOf(".");
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : "";
    name = name.slice(0, NAME_MAX - ext.length) + ext;
  }
  return name || "file";
}

/** `att/<yyyy>/<mm>/<128 random bits, base64url>/<name>`: unguessable, and the date prefix helps lifecycle rules. */
export function objectKey(filename: string, now: number): string {
  const d = new Date(now);
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url");
  return `att/${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, "0")}/${random}/${filename}`;
}

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** The declared type when well formed, else what the extension says, else application/octet-stream. */
export function contentTypeFor(filename: string, declared: string | undefined): string | undefined {
  if (declared !== undefined && declared !== "") return MIME.test(declared.toLowerCase()) ? declared.toLowerCase() : undefined;
  const guessed = Bun.file(filename).type.split(";")[0]!;
  return guessed && MIME.test(guessed) ? guessed : "application/octet-stream";
}

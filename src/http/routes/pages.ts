/** The two public pages (spec §4.1). Plain HTML, no assets: they must render anywhere, including in-app web views. */
const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#222}</style>
</head><body><h1>${title}</h1>
${body}
</body></html>
`;

export const privacyPolicyPage = () =>
  page(
    "Privacy policy",
    `<p>This messaging service is operated privately by the organisation that deployed it. It stores your account name,
nickname, the devices you sign in from and the messages you send, only to deliver them to their recipients and to
keep your history. End-to-end encrypted messages are stored as ciphertext the server cannot read.</p>
<p>Data is not sold or shared with third parties. Stored messages are pruned after the retention period the operator
configured. You may delete your account at any time (see <a href="/account-deletion">account deletion</a>).</p>`,
  );

export const accountDeletionPage = (graceDays: number) =>
  page(
    "Account deletion",
    `<p>To delete your account, open the app and choose <em>Delete account</em> (the app calls
<code>POST /api/v1/user/apply_logout</code>). Your account is deleted ${graceDays} day${graceDays === 1 ? "" : "s"} after the
request; until then you can sign in and cancel it (<code>POST /api/v1/user/cancel_logout</code>).</p>
<p>On deletion your password, nickname, avatar and profile text are erased, every token of the account stops working
and the account name becomes free again. Messages already delivered to other people stay in their history.</p>`,
  );

// The console's pages for people who are not signed in: the console switched off, the sign-in
// form, and refusals.
import { consoleFrame, esc } from './html.js';

/** With OPERATOR_TOKEN unset the console says so, says how to turn it on, and nothing else. */
export const offPage = (): string =>
  consoleFrame({
    title: 'Console off',
    body: `<h1>The operator console is off</h1>
<p>This instance has no operator token, so there is no console and no operator API.</p>
<p>To turn it on, start the service with <code>OPERATOR_TOKEN</code> set to a long random secret
(for example <code>openssl rand -base64 48</code>), then sign in here with that token.</p>`,
  });

export interface SignInView {
  title: string;
  message?: string;
  /** false: a refusal page, with a link to the console instead of the form. */
  signIn?: boolean;
  /** The message is an error (announced as an alert). */
  alert?: boolean;
}

const FORM = `<form method="post" action="/operator/sign-in" class="stack">
<label for="token">Operator token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false">
<button type="submit">Sign in</button>
</form>
<p class="hint">The token is sent once, in this form, and never appears in a URL. Signing in sets a
session cookie for this console only; it ends after 30 minutes without use, 8 hours after sign-in,
or when you sign out.</p>`;

export function signInPage(v: SignInView): string {
  const message = v.message ? `<p${v.alert ? ' role="alert"' : ''} class="${v.alert ? 'error' : 'note'}">${esc(v.message)}</p>` : '';
  const rest = v.signIn === false ? '<p><a href="/operator">Back to the console</a></p>' : FORM;
  return consoleFrame({ title: v.title, body: `<h1>${esc(v.title)}</h1>\n${message}\n${rest}` });
}

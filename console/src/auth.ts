/**
 * Signing in: locally with the email form (`POST /local/sign-in`); on AWS with Cognito's
 * hosted UI, authorization code grant with PKCE. The ID token is the bearer token.
 */
import type { ConsoleSignIn } from '../config';
import { originOf } from '../config';
import { api, storeToken } from './api';

type CognitoSignIn = Extract<ConsoleSignIn, { kind: 'cognito' }>;

/** The verifier, state and page to return to, kept across the redirect (this tab only). */
const PENDING_KEY = 'agent-sessions.sign-in';

function base64url(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let text = '';
  for (const byte of view) text += String.fromCharCode(byte);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function randomString(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Signs in locally: a user token for `email`. */
export async function localSignIn(email: string): Promise<void> {
  const { token } = await api().localSignIn({ email });
  storeToken(token);
}

/** Sends the browser to Cognito's hosted UI; it comes back to the callback page with a code. */
export async function beginHostedSignIn(signIn: CognitoSignIn, returnTo: string): Promise<void> {
  const verifier = randomString(48);
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const state = randomString(24);
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, returnTo }));
  const url = new URL('/oauth2/authorize', originOf(signIn.domain));
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: signIn.clientId,
    redirect_uri: signIn.redirectUri,
    scope: 'openid email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.href);
}

/** On the callback page: trades the code for tokens with the verifier; returns the page to go back to. */
export async function completeHostedSignIn(signIn: CognitoSignIn, search: string): Promise<string> {
  const params = new URLSearchParams(search);
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING_KEY);
  const refused = params.get('error');
  if (refused) throw new Error(params.get('error_description') ?? refused);
  const code = params.get('code');
  if (!pending || !code || params.get('state') !== pending.state) throw new Error('This sign-in could not be completed (its state does not match); sign in again.');
  const response = await fetch(new URL('/oauth2/token', originOf(signIn.domain)), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: signIn.clientId,
      code,
      redirect_uri: signIn.redirectUri,
      code_verifier: pending.verifier,
    }),
  });
  const body = (await response.json().catch(() => ({}))) as { id_token?: unknown; error?: string; error_description?: string };
  if (!response.ok || typeof body.id_token !== 'string') {
    throw new Error(body.error_description ?? body.error ?? `the token endpoint answered ${response.status}`);
  }
  storeToken(body.id_token);
  return pending.returnTo;
}

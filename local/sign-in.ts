/**
 * The local sign-in stand-in for Cognito's browser sign-in: `POST /local/sign-in` with an
 * email returns an ID-token-shaped JWT (RS256), and the public key is served at
 * `<issuer>/.well-known/jwks.json`, where Cognito serves its own relative to its issuer,
 * so the service verifies both kinds with the same code.
 */
import { createHash } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { z } from 'zod';
import { LocalCloudError } from './errors';
import type { GatewayRoute } from './gateway';

export const LOCAL_AUDIENCE = 'agent-sessions-local';
const TOKEN_LIFETIME = '12h';
/** Fixed namespace so an email maps to the same `sub` everywhere, across restarts and data dirs. */
const SUBJECT_NAMESPACE = Buffer.from('6f1d3c1e8a7b4f0c9d2e5a4b3c2d1e0f', 'hex');

export interface SignInOptions {
  /**
   * `<baseUrl>/local`: the `iss` claim and the base of the JWKS URL. A function, because
   * the routes exist before the gateway has a port (and so a base URL).
   */
  issuer: () => string;
  /** Where the key pair persists (mode 0600); null makes it last as long as the process. */
  keyFile: string | null;
}

export interface SignIn {
  routes: GatewayRoute[];
  /** Settles once the signing key is loaded or made; rejects when the key file is unusable. */
  loaded: Promise<void>;
}

// The HTML5 pattern, not zod's stricter default: the default founder is `dev@localhost`.
const signInBody = z.object({ email: z.email({ pattern: z.regexes.html5Email }) });

/** The stable UUID-shaped subject (a version 5 UUID) of a lowercased email. */
export function subjectFor(email: string): string {
  const hash = createHash('sha1').update(SUBJECT_NAMESPACE).update(email.toLowerCase()).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

async function loadOrCreateKey(keyFile: string | null): Promise<JWK> {
  if (keyFile) {
    try {
      return JSON.parse(await readFile(keyFile, 'utf8')) as JWK;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new LocalCloudError(`${keyFile} is not a valid signing key; delete it to make a new one (tokens issued with it stop working)`);
      }
    }
  }
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  if (keyFile) {
    await writeFile(keyFile, JSON.stringify(jwk), { mode: 0o600 });
    await chmod(keyFile, 0o600);
  }
  return jwk;
}

function json(statusCode: number, body: unknown) {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function parseBody(event: APIGatewayProxyEventV2): unknown {
  const text = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function loadKeys(keyFile: string | null) {
  const privateJwk = await loadOrCreateKey(keyFile);
  const kid = await calculateJwkThumbprint(privateJwk);
  const privateKey = await importJWK(privateJwk, 'RS256');
  const { kty, n, e } = privateJwk;
  return { kid, privateKey, jwks: { keys: [{ kty, n, e, kid, alg: 'RS256', use: 'sig' }] } };
}

/**
 * Returns the sign-in and JWKS routes at once and loads (or creates) the signing key in
 * the background, since making an RSA key takes a few hundred milliseconds.
 */
export function createSignIn(options: SignInOptions): SignIn {
  const keys = loadKeys(options.keyFile);
  // The failure is reported through `loaded`; handlers only run once that has settled.
  keys.catch(() => undefined);

  async function tokenFor(email: string): Promise<string> {
    const { kid, privateKey } = await keys;
    const address = email.toLowerCase();
    return new SignJWT({ email: address, email_verified: true, token_use: 'id' })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(options.issuer())
      .setAudience(LOCAL_AUDIENCE)
      .setSubject(subjectFor(address))
      .setIssuedAt()
      .setExpirationTime(TOKEN_LIFETIME)
      .sign(privateKey);
  }

  return {
    loaded: keys.then(() => undefined),
    routes: [
      {
        method: 'POST',
        path: '/local/sign-in',
        handler: async (event) => {
          const body = parseBody(event);
          if (typeof body !== 'object' || body === null || Array.isArray(body)) {
            return json(400, { message: 'body must be a JSON object with an email field' });
          }
          const parsed = signInBody.safeParse(body);
          if (!parsed.success) {
            const missing = (body as { email?: unknown }).email === undefined;
            return json(400, { message: missing ? 'email is required' : 'email must be a valid email address' });
          }
          return json(200, { token: await tokenFor(parsed.data.email) });
        },
      },
      {
        method: 'GET',
        path: '/local/.well-known/jwks.json',
        handler: async () => json(200, (await keys).jwks),
      },
    ],
  };
}

/**
 * Authentication: `Authorization: Bearer <credential>` is either an organization API key
 * or a user's ID token (Cognito on AWS, the local sign-in locally), verified against the
 * issuer's JWKS by the same code in both worlds.
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import { config } from '#kit/config';
import { UnauthenticatedError, UnavailableError } from '#core/errors';
import { API_KEY_PREFIX, apiKeyPrincipal, userPrincipal } from '#core/identity';
import type { Principal } from '#core/principal';
import { identityStore } from '#functions/stores';
import type { RouteAuth } from '#functions/routes';

let keySet: { issuer: string; jwks: ReturnType<typeof createRemoteJWKSet> } | undefined;

function jwksOf(issuer: string) {
  if (keySet?.issuer !== issuer) {
    keySet = { issuer, jwks: createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`)) };
  }
  return keySet.jwks;
}

/** The claims of a valid ID token; 401 for anything else, 503 when the JWKS is unreachable. */
async function verifyIdToken(token: string): Promise<{ sub: string; email: string }> {
  const issuer = config.authIssuer;
  try {
    const { payload } = await jwtVerify(token, jwksOf(issuer), {
      issuer,
      audience: config.authAudience,
      algorithms: ['RS256'],
      requiredClaims: ['sub', 'exp'],
    });
    if (payload.token_use !== 'id' || typeof payload.email !== 'string' || !payload.sub) {
      throw new UnauthenticatedError('bearer token is not an ID token with an email');
    }
    // Invites are redeemed by address: an unverified address must not claim one.
    if (payload.email_verified !== true) throw new UnauthenticatedError('the email address is not verified yet');
    return { sub: payload.sub, email: payload.email };
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new UnauthenticatedError('bearer token has expired');
    // Anything but a verdict on the token itself means the key set could not be had.
    const keySetUnusable = error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid;
    if (keySetUnusable || !(error instanceof joseErrors.JOSEError)) {
      throw new UnavailableError('the sign-in key set cannot be fetched right now', 5);
    }
    throw new UnauthenticatedError('bearer token is not valid');
  }
}

/** The principal behind an `Authorization` header, as the route's auth mode allows. */
export async function authenticate(header: string | undefined, mode: Exclude<RouteAuth, 'none'>): Promise<Principal> {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  if (!match?.[1]) throw new UnauthenticatedError('missing credential: send Authorization: Bearer <token or API key>');
  const credential = match[1];
  if (credential.startsWith(API_KEY_PREFIX)) {
    if (mode === 'user') throw new UnauthenticatedError('this endpoint needs a signed-in user; API keys are not accepted');
    return apiKeyPrincipal(identityStore(), credential);
  }
  return userPrincipal(identityStore(), await verifyIdToken(credential));
}

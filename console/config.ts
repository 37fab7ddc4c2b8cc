/**
 * What the console learns at run time from `config.json`, served next to its index.html,
 * and the security headers every console file is served with. Shared by the browser app
 * (type only), the local gateway's console route and the CDK stack, so the policy is
 * written once.
 */

/** How the console signs a user in: the local form, or Cognito's hosted UI. */
export type ConsoleSignIn =
  | { kind: 'local' }
  | {
      kind: 'cognito';
      /** The hosted UI's origin, e.g. `https://auth.example.com` or `https://<prefix>.auth.<region>.amazoncognito.com`. */
      domain: string;
      /** The app client: public (no secret), authorization code grant with PKCE. */
      clientId: string;
      /** Where Cognito sends the browser back: `<console origin>/console/callback`. */
      redirectUri: string;
    };

/** The body of `/console/config.json`. */
export interface ConsoleConfig {
  /** The HTTP API's base URL, no trailing slash. */
  apiUrl: string;
  signIn: ConsoleSignIn;
}

/** Where the console is served; its files reference each other by these absolute paths. */
export const CONSOLE_BASE_PATH = '/console/';

/** The path of the callback page Cognito returns to (append it to the console's origin for `redirectUri`). */
export const CONSOLE_CALLBACK_PATH = '/console/callback';

/** The origin of a URL; a bare host (a Cognito domain given without a scheme) is taken as https. */
export function originOf(url: string): string {
  return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`).origin;
}

/**
 * The Content-Security-Policy for the console: only its own files run, and it talks only
 * to itself, the API and (on AWS) Cognito's token endpoint.
 */
export function contentSecurityPolicy(config: ConsoleConfig): string {
  const connect = new Set(["'self'", originOf(config.apiUrl)]);
  if (config.signIn.kind === 'cognito') connect.add(originOf(config.signIn.domain));
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${[...connect].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

/** The headers every console answer carries (index.html, assets, config.json). */
export function securityHeaders(config: ConsoleConfig): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(config),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

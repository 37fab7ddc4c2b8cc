/**
 * The console as the local gateway serves it: `GET /console/...` answers the built files,
 * `config.json` (the API is this gateway, sign-in is the local form), and `index.html` for
 * every other path without a file extension, so deep links (`/console/traces/<key>`) open
 * the app. Every answer carries the console's security headers.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { GatewayRoute } from '../local/gateway';
import { buildConsole, readConsoleFiles } from './build';
import { CONSOLE_BASE_PATH, securityHeaders, type ConsoleConfig } from './config';

export interface ConsoleSiteOptions {
  /** The gateway's own base URL; a function, as the routes exist before the gateway has a port. */
  apiUrl: () => string;
}

export interface ConsoleSite {
  routes: GatewayRoute[];
  /** Settles once the console is built (or read from the cache): undefined, or why it could not be. */
  loaded: Promise<string | undefined>;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** A `host` header naming a loopback or named host and an optional port, nothing else. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;

/**
 * The API's origin as the browser reached this gateway: `localhost` and `127.0.0.1` are
 * different origins, and the app may only call its own (CSP, no CORS locally).
 */
function apiUrlFor(event: APIGatewayProxyEventV2, fallback: string): string {
  const host = event.headers.host;
  return host && HOST.test(host) ? `http://${host}` : fallback;
}

/** A path naming a file rather than a page: under `assets/`, or a top-level name with an extension (`favicon.ico`). */
function isFilePath(path: string): boolean {
  return path.startsWith('assets/') || (!path.includes('/') && /\.[a-z0-9]+$/i.test(path));
}

function answer(status: number, config: ConsoleConfig, type: string, body: Buffer | string, cache: string): APIGatewayProxyStructuredResultV2 {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return {
    statusCode: status,
    headers: { ...securityHeaders(config), 'content-type': type, 'cache-control': cache },
    body: bytes.toString('base64'),
    isBase64Encoded: true,
  };
}

/** Starts building the console and returns its routes, which answer once it is built. */
export function createConsoleSite(options: ConsoleSiteOptions): ConsoleSite {
  const files = buildConsole().then(readConsoleFiles);
  const loaded = files.then(
    () => undefined,
    (error: unknown) => `the web console could not be built: ${error instanceof Error ? error.message : String(error)}`,
  );

  async function serve(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
    const config: ConsoleConfig = { apiUrl: apiUrlFor(event, options.apiUrl()), signIn: { kind: 'local' } };
    const failure = await loaded;
    if (failure) return answer(503, config, TYPES.json!, JSON.stringify({ message: failure }), 'no-store');
    const built = await files;
    const path = event.rawPath.slice(CONSOLE_BASE_PATH.length);
    if (path === 'config.json') return answer(200, config, TYPES.json!, JSON.stringify(config), 'no-store');
    const file = built.get(path);
    if (file) {
      const extension = path.slice(path.lastIndexOf('.') + 1);
      // Asset names carry their content hash.
      return answer(200, config, TYPES[extension] ?? 'application/octet-stream', file, path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    }
    // A missing asset or top-level file is a 404; any other path is a page of the app (ids may hold dots).
    if (isFilePath(path)) return answer(404, config, TYPES.json!, JSON.stringify({ message: 'Not Found' }), 'no-store');
    return answer(200, config, TYPES.html!, built.get('index.html')!, 'no-cache');
  }

  return {
    loaded,
    routes: [
      {
        method: 'GET',
        path: '/console',
        handler: async () => ({ statusCode: 308, headers: { location: CONSOLE_BASE_PATH }, body: '' }),
      },
      { method: 'GET', path: '/console/{path+}', handler: serve },
    ],
  };
}

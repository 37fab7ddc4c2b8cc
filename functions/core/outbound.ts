/**
 * Where the service sends what happened on its own (webhooks, the OTLP export): the rules
 * a target URL must keep, checked when it is registered and again on every connection, and
 * the one HTTP POST that sends to it.
 *
 * The address rules hold at connection time, not only at registration: a name that
 * resolved to a public address then may resolve to the instance metadata service later
 * (DNS rebinding), so the POST resolves through `guardedLookup` and connects only to the
 * address it checked.
 */
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { config } from '#kit/config';
import { InvalidInputError } from './errors';

// Link-local addresses, the EC2/Lambda metadata service among them (169.254.169.254 and
// its IPv6 address fd00:ec2::254): never a destination, wherever the service runs.
const linkLocal = new BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');
linkLocal.addAddress('fd00:ec2::254', 'ipv6');

// Loopback (and the unspecified address, which connects to it): only in the local cloud,
// whose tests run their receivers on 127.0.0.1.
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('0.0.0.0', 'ipv4');
loopback.addAddress('::1', 'ipv6');
loopback.addAddress('::', 'ipv6');

/** An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) is checked as the IPv4 address it is. */
function normalized(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Why the service must not connect to this address, or undefined when it may. */
export function addressRefusal(address: string): string | undefined {
  const { address: plain, family } = normalized(address);
  if (linkLocal.check(plain, family)) return `${address} is a link-local or metadata address`;
  if (!config.loopbackUrls && loopback.check(plain, family)) return `${address} is a loopback address`;
  return undefined;
}

const isLoopbackName = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost');

/** The host of a URL without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

// A registration does not wait long on DNS: a name that does not resolve yet is checked again at every connection.
const REGISTRATION_LOOKUP_MS = 2_000;

/**
 * Checks a webhook or export URL as registered: https, or http to a loopback address in
 * the local cloud; and no address it names or resolves to may be link-local, the metadata
 * service's, or loopback outside the local cloud. 400 (InvalidInputError) otherwise.
 */
export async function checkTargetUrl(text: string, field: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidInputError(`${field} must be an absolute URL`);
  }
  const host = hostOf(url);
  const loopbackHost = isLoopbackName(host) || (isIP(host) !== 0 && loopback.check(normalized(host).address, normalized(host).family));
  if (url.protocol === 'http:') {
    if (!(config.loopbackUrls && loopbackHost)) throw new InvalidInputError(`${field} must be an https URL${config.loopbackUrls ? ' (http only to loopback addresses)' : ''}`);
  } else if (url.protocol !== 'https:') {
    throw new InvalidInputError(`${field} must be an https URL`);
  }
  if (isLoopbackName(host)) {
    if (!config.loopbackUrls) throw new InvalidInputError(`${field} must not name a loopback address`);
    return url;
  }
  const addresses = isIP(host) ? [host] : await resolveForRegistration(host);
  for (const address of addresses) {
    const refusal = addressRefusal(address);
    if (refusal) throw new InvalidInputError(`${field} must not resolve to ${refusal.replace(/^\S+ is /, '')} (${host} resolves to ${address})`);
  }
  return url;
}

async function resolveForRegistration(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const found = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<LookupAddress[]>((resolve) => {
        timer = setTimeout(() => resolve([]), REGISTRATION_LOOKUP_MS);
      }),
    ]);
    return found.map((entry) => entry.address);
  } catch {
    // Not resolvable now: every delivery resolves it again and refuses what it must.
    return [];
  } finally {
    clearTimeout(timer);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses a name resolving to any address the rules
 * forbid, so the connection goes only where the check looked.
 */
function guardedLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  lookup(hostname, { all: true, verbatim: true }).then(
    (addresses) => {
      const refused = addresses.map((entry) => addressRefusal(entry.address)).find(Boolean);
      if (refused) {
        const error: NodeJS.ErrnoException = new Error(`refused to connect: ${refused}`);
        error.code = 'EADDRREFUSED';
        callback(error, []);
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    },
    (error: NodeJS.ErrnoException) => callback(error, []),
  );
}

/** What a POST to a target came to: its status code, or why there was none. */
export type PostResult = { status: number } | { error: string };

/**
 * POSTs a body to a target URL with the address rules enforced at connection time; no
 * answer within `timeoutMs` (headers and body together) counts as none. Never throws.
 */
export async function postToTarget(target: string, body: Uint8Array | string, headers: Record<string, string>, timeoutMs: number): Promise<PostResult> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { error: 'the URL is not valid' };
  }
  const host = hostOf(url);
  if (isIP(host)) {
    const refusal = addressRefusal(host);
    if (refusal) return { error: `refused to connect: ${refusal}` };
  }
  const send = url.protocol === 'https:' ? https.request : http.request;
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return new Promise<PostResult>((resolve) => {
    const request = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(payload.byteLength), 'user-agent': 'agent-sessions' },
        lookup: guardedLookup as never,
        // No connection reuse: each delivery stands alone, and a pooled socket would skip the lookup.
        agent: false,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (response) => {
        // Drain the answer (bounded by the same timeout); only its status matters.
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
        response.on('error', (error) => resolve({ error: describe(error, timeoutMs) }));
      },
    );
    request.on('error', (error) => resolve({ error: describe(error, timeoutMs) }));
    request.end(payload);
  });
}

function describe(error: Error, timeoutMs: number): string {
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND') return 'the host name does not resolve';
  if (code === 'EADDRREFUSED') return error.message;
  return code ? `${code}: ${error.message}` : error.message;
}

/**
 * A fake OTLP/HTTP traces receiver on 127.0.0.1: `POST /v1/traces` with an
 * `ExportTraceServiceRequest` as protobuf (`application/x-protobuf`, decoded with
 * protobufjs and our subset of the official schema, `otlp/trace.proto`) or as OTLP JSON
 * (`application/json`), gzipped or not. Every request is recorded; an accepted one (2xx)
 * is decoded into `exports`. `answer` and `failNext` script the status it answers, and a
 * test can stop it and start another on the same port: the endpoint is down for a
 * while, then back.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/** An attribute's value: OTLP's AnyValue as plain data (ints as numbers, bytes as hex). */
export type ReceivedValue = string | number | boolean | ReceivedValue[] | { [key: string]: ReceivedValue };

export interface ReceivedSpan {
  /** Lowercase hex, 32 digits. */
  traceId: string;
  /** Lowercase hex, 16 digits. */
  spanId: string;
  /** Lowercase hex; '' for a root. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 INTERNAL, 2 SERVER, 3 CLIENT, 4 PRODUCER, 5 CONSUMER. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  /** OTLP's StatusCode: 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: number; message: string };
  attributes: Record<string, ReceivedValue>;
  /** Its instrumentation scope's name. */
  scope: string;
}

/** What one request held. */
export interface DecodedTraces {
  /** The attributes of its resources, merged (the service sends one). */
  resourceAttributes: Record<string, ReceivedValue>;
  spans: ReceivedSpan[];
}

export interface ReceivedExport extends DecodedTraces {
  headers: Record<string, string>;
  /** The media type, without parameters. */
  contentType: string;
  /** The body with any content encoding undone. */
  raw: Buffer;
}

export interface ReceivedRequest {
  headers: Record<string, string>;
  contentType: string;
  /** What the receiver answered. */
  status: number;
  /** Why a body was refused (400, 415). */
  error?: string;
}

export interface OtlpReceiver {
  /** Where to export: `http://127.0.0.1:<port>/v1/traces`. */
  url: string;
  port: number;
  /** Every export it accepted, in order of arrival. */
  exports: ReceivedExport[];
  /** Every request to `/v1/traces`, accepted or not. */
  requests: ReceivedRequest[];
  /** The status for subsequent requests (default 200); only a 2xx records an export. */
  answer(status: number): void;
  /** Answer the next `n` requests with `status` (default 500), before `answer`'s. */
  failNext(n: number, status?: number): void;
  /** Resolves once `count` exports have been accepted; rejects after `timeoutMs` (default 5 s). */
  waitForExports(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const schema = protobuf.loadSync(join(import.meta.dirname, 'otlp', 'trace.proto'));
const ExportTraceServiceRequest = schema.lookupType('agent_sessions.test.otlp.ExportTraceServiceRequest');
const SpanKind = schema.lookupEnum('agent_sessions.test.otlp.Span.SpanKind');
const StatusCode = schema.lookupEnum('agent_sessions.test.otlp.Status.StatusCode');

/**
 * The request in OTLP's JSON shape, as protobufjs's `toObject` also gives it: camelCase
 * names, 64-bit integers as decimal strings (JSON may send numbers), ids as bytes
 * (protobuf) or hex (JSON), enums as numbers (JSON may send names).
 */
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
  bytesValue?: Uint8Array | string;
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
interface OtlpSpan {
  traceId?: Uint8Array | string;
  spanId?: Uint8Array | string;
  parentSpanId?: Uint8Array | string;
  name?: string;
  kind?: number | string;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number | string; message?: string };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
}

/** An export body decoded: `contentType` `application/x-protobuf` or `application/json`. */
export function decodeOtlpTraces(body: Uint8Array, contentType: string): DecodedTraces {
  const request: OtlpRequest =
    contentType === 'application/x-protobuf'
      ? (ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, enums: Number }) as OtlpRequest)
      : contentType === 'application/json'
        ? (JSON.parse(Buffer.from(body).toString('utf8')) as OtlpRequest)
        : unsupported(contentType);
  const resourceAttributes: Record<string, ReceivedValue> = {};
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    Object.assign(resourceAttributes, attributes(resourceSpans.resource?.attributes));
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name ?? '',
          kind: enumNumber(SpanKind, span.kind),
          startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
          endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
          status: { code: enumNumber(StatusCode, span.status?.code), message: span.status?.message ?? '' },
          attributes: attributes(span.attributes),
          scope: scopeSpans.scope?.name ?? '',
        });
      }
    }
  }
  return { resourceAttributes, spans };
}

class UnsupportedMediaTypeError extends Error {}

function unsupported(contentType: string): never {
  throw new UnsupportedMediaTypeError(`unsupported content type: ${contentType || '(none)'}`);
}

/** Protobuf bytes or OTLP JSON's hex string, as lowercase hex. */
function hex(id: Uint8Array | string | undefined): string {
  if (id === undefined) return '';
  return typeof id === 'string' ? id.toLowerCase() : Buffer.from(id).toString('hex');
}

function enumNumber(type: protobuf.Enum, value: number | string | undefined): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const number = type.values[value];
  if (number === undefined) throw new Error(`unknown ${type.name} value: ${value}`);
  return number;
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, ReceivedValue> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, anyValue(value)]));
}

function anyValue(value: OtlpAnyValue | undefined): ReceivedValue {
  if (value?.stringValue !== undefined) return value.stringValue;
  if (value?.boolValue !== undefined) return value.boolValue;
  if (value?.intValue !== undefined) return Number(value.intValue);
  if (value?.doubleValue !== undefined) return Number(value.doubleValue);
  if (value?.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(anyValue);
  if (value?.kvlistValue !== undefined) return attributes(value.kvlistValue.values);
  // OTLP JSON sends bytes values in base64 (only ids are hex).
  if (value?.bytesValue !== undefined) return typeof value.bytesValue === 'string' ? Buffer.from(value.bytesValue, 'base64').toString('hex') : hex(value.bytesValue);
  throw new Error('an attribute without a value');
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]])));
}

/** Starts a receiver on 127.0.0.1, on `port` when given (to bring an endpoint back), else on a free one. */
export async function startOtlpReceiver(options: { port?: number } = {}): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const requests: ReceivedRequest[] = [];
  const failures: number[] = [];
  const waiters = new Set<() => void>();
  let status = 200;

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { pathname } = new URL(request.url ?? '/', 'http://receiver');
      if (request.method !== 'POST' || pathname !== '/v1/traces') return void response.writeHead(404).end();
      const headers = flatHeaders(request.headers);
      const contentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const recorded: ReceivedRequest = { headers, contentType, status: failures.shift() ?? status };
      requests.push(recorded);
      if (recorded.status < 200 || recorded.status > 299) return void response.writeHead(recorded.status, { 'content-type': 'text/plain' }).end('scripted failure');

      try {
        const raw = headers['content-encoding'] === 'gzip' ? gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks);
        exports.push({ headers, contentType, raw, ...decodeOtlpTraces(raw, contentType) });
      } catch (error) {
        recorded.status = error instanceof UnsupportedMediaTypeError ? 415 : 400;
        recorded.error = (error as Error).message;
        return void response.writeHead(recorded.status, { 'content-type': 'text/plain' }).end(recorded.error);
      }
      for (const waiter of waiters) waiter();
      // An empty ExportTraceServiceResponse: everything accepted. It encodes to no bytes.
      if (contentType === 'application/json') response.writeHead(recorded.status, { 'content-type': 'application/json' }).end('{}');
      else response.writeHead(recorded.status, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    port,
    exports,
    requests,
    answer: (next) => void (status = next),
    failNext: (n, failure = 500) => void failures.push(...Array.from({ length: n }, () => failure)),
    waitForExports: (count, timeoutMs = 5_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (exports.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} OTLP exports within ${timeoutMs} ms; ${exports.length} arrived`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    stop: async () => {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

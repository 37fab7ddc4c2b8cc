/**
 * Tools of MCP servers over Streamable HTTP. Each configured server is connected when
 * the toolbox opens (secret references in its url and header values resolved), its tools
 * are listed (every page) and filtered by `allowed_tools`, and each is offered to the
 * model as `<server>__<tool>` with the server's description and input schema.
 *
 * A server that cannot be reached (or listed) in time does not stop the attempt:
 * - the system prompt says which server is unavailable and why, so the model knows up
 *   front and the reason is in the trace (the model_call span's input);
 * - each tool the configuration names in `allowed_tools` is still offered under its
 *   name, and calling it fails with that reason: a FAILED tool_call span saying what
 *   happened, where the model would otherwise get "unknown tool";
 * - a warning is logged.
 * A failure during a call (server gone, timeout, `isError` result) is thrown, so the loop
 * records a FAILED tool_call span and hands the message to the model.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AgentConfig } from '#contracts/agent';
import { config } from '#kit/config';
import type { Logger } from '#kit/log';
import type { ToolboxContext, ToolSet } from './types';
import { resolveReferences } from '../secrets';
import type { Redactor, Tool } from '../types';

type McpServerConfig = NonNullable<AgentConfig['mcp_servers']>[number];

export interface McpOptions {
  /** Resolved secret values by name (the header references). */
  secrets: ReadonlyMap<string, string>;
  /** Redacts those values from what a server's failure reports. */
  redactor: Redactor;
  /** Aborts connecting and listing (the attempt is being stopped). */
  signal: AbortSignal;
  /** Bound of connecting to one server and listing its tools. */
  connectTimeoutMs: number;
  /** Bound of one tool call. */
  callTimeoutMs: number;
  log?: Logger;
}

const CONNECT_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 300_000;
// What every model provider accepts as a function name (OpenAI and Bedrock: 64 characters).
const CALLABLE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
// Bounds a server's answer to the session it is told to end; nothing waits on it.
const CLOSE_TIMEOUT_MS = 2_000;

interface ListedTool {
  name: string;
  description?: string;
  title?: string;
  inputSchema: Record<string, unknown>;
}

interface Connection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  tools: ListedTool[];
}

/** The message of an error, with the network cause fetch hides behind "fetch failed". */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.message === 'string' && cause.message !== '' ? cause.message : typeof cause?.code === 'string' ? cause.code : undefined;
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}

function withTimeout(signal: AbortSignal, ms: number): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(ms)]);
}

/** Whether the bound ran out: our own signal or the SDK's request timeout, whichever fired first. */
function timedOut(signal: AbortSignal, error: unknown): boolean {
  return signal.aborted || (error instanceof McpError && error.code === ErrorCode.RequestTimeout);
}

/** Connects to one server and lists all its tools (following `nextCursor`). */
async function connect(server: McpServerConfig, options: McpOptions): Promise<Connection> {
  const headers = Object.fromEntries(Object.entries(server.headers ?? {}).map(([name, value]) => [name, resolveReferences(value, options.secrets)]));
  const transport = new StreamableHTTPClientTransport(new URL(resolveReferences(server.url, options.secrets)), { requestInit: { headers } });
  const client = new Client({ name: 'agent-session-service', version: '1.0.0' });
  // One bound for the whole exchange: connecting and every page of the listing.
  const signal = withTimeout(options.signal, options.connectTimeoutMs);
  const request = { signal, timeout: options.connectTimeoutMs };
  try {
    await client.connect(transport, request);
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, request);
      tools.push(...(page.tools as ListedTool[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { client, transport, tools };
  } catch (error) {
    await client.close().catch(() => undefined);
    options.signal.throwIfAborted();
    if (timedOut(signal, error)) throw new Error(`no answer within ${options.connectTimeoutMs / 1000} s`);
    throw error;
  }
}

/** The text a call result stands for: text parts joined, any other part as JSON. */
function contentText(result: Record<string, unknown>): string {
  if (!Array.isArray(result.content)) return JSON.stringify(result.toolResult ?? result.structuredContent ?? null);
  return (result.content as { type: string; text?: string }[])
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part)))
    .join('\n');
}

function objectArguments(args: unknown): Record<string, unknown> {
  if (args === null || args === undefined) return {};
  if (typeof args !== 'object' || Array.isArray(args)) throw new Error('the arguments must be a JSON object');
  return args as Record<string, unknown>;
}

function liveTool(server: McpServerConfig, tool: ListedTool, connection: Connection, options: McpOptions): Tool {
  const exposed = `${server.name}__${tool.name}`;
  return {
    name: exposed,
    description: tool.description ?? tool.title ?? `The tool ${tool.name} of the MCP server ${server.name}.`,
    parameters: tool.inputSchema,
    async call(args, context) {
      const signal = withTimeout(context.signal, options.callTimeoutMs);
      let result: Record<string, unknown>;
      try {
        result = await connection.client.callTool({ name: tool.name, arguments: objectArguments(args) }, undefined, { signal, timeout: options.callTimeoutMs });
      } catch (error) {
        context.signal.throwIfAborted();
        if (timedOut(signal, error)) throw new Error(`MCP server ${server.name}: ${tool.name} did not answer within ${options.callTimeoutMs / 1000} s`);
        throw new Error(`MCP server ${server.name} failed during ${tool.name}: ${describe(error)}`);
      }
      const text = contentText(result);
      if (result.isError === true) throw new Error(text || `MCP server ${server.name}: ${tool.name} reported an error`);
      return text;
    },
  };
}

/** What an unreachable server contributes: a stand-in per named tool, each failing with the reason. */
function unavailableTools(server: McpServerConfig, reason: string): Tool[] {
  return (server.allowed_tools ?? []).map((name) => ({
    name: `${server.name}__${name}`,
    description: `Unavailable: the MCP server ${server.name} could not be reached.`,
    parameters: { type: 'object', properties: {} },
    async call() {
      throw new Error(`MCP server ${server.name} could not be reached when this attempt's tools were opened: ${reason}`);
    },
  }));
}

async function closeConnection({ client, transport }: Connection): Promise<void> {
  // A stateful server is told the session is over; one that does not answer is not waited for.
  await Promise.race([transport.terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref())]);
  await client.close().catch(() => undefined);
}

/** Connects to every server (in parallel) and returns their tools; see the module doc for failures. */
export async function openMcpServers(servers: McpServerConfig[], options: McpOptions): Promise<ToolSet & { instructions: string[]; close(): Promise<void> }> {
  const { redactor } = options;
  // `allowed_tools: []` offers nothing: such a server is not even contacted.
  const wanted = servers.filter((server) => server.allowed_tools === undefined || server.allowed_tools.length > 0);
  const outcomes = await Promise.allSettled(wanted.map((server) => connect(server, options)));
  const connections = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  if (options.signal.aborted) {
    await Promise.allSettled(connections.map(closeConnection));
    options.signal.throwIfAborted();
  }

  const tools: Tool[] = [];
  const instructions: string[] = [];
  wanted.forEach((server, index) => {
    const outcome = outcomes[index]!;
    if (outcome.status === 'rejected') {
      const reason = redactor.redact(describe(outcome.reason));
      options.log?.warn('MCP server unreachable', { server: server.name, error: reason });
      instructions.push(`The MCP server ${server.name} could not be reached (${reason}), so its tools are not available in this attempt.`);
      tools.push(...unavailableTools(server, reason));
      return;
    }
    const connection = outcome.value;
    const allowed = server.allowed_tools === undefined ? undefined : new Set(server.allowed_tools);
    const listed = connection.tools.filter((tool) => !allowed || allowed.has(tool.name));
    const missing = [...(allowed ?? [])].filter((name) => !connection.tools.some((tool) => tool.name === name));
    if (missing.length) options.log?.warn('MCP server lacks allowed tools', { server: server.name, tools: missing.join(', ') });
    const uncallable = listed.filter((tool) => !CALLABLE_NAME.test(`${server.name}__${tool.name}`));
    if (uncallable.length) {
      instructions.push(
        `The MCP server ${server.name} has tools whose names models cannot call (${uncallable.map((tool) => tool.name).join(', ')}); they are left out.`,
      );
    }
    // `a` with `b__c` and `a__b` with `c` are both `a__b__c`: the first server keeps the name.
    const taken = listed.filter((tool) => !uncallable.includes(tool) && tools.some((other) => other.name === `${server.name}__${tool.name}`));
    if (taken.length) {
      instructions.push(`The MCP server ${server.name} has tools named like another server's (${taken.map((tool) => tool.name).join(', ')}); they are left out.`);
    }
    tools.push(...listed.filter((tool) => !uncallable.includes(tool) && !taken.includes(tool)).map((tool) => liveTool(server, tool, connection, options)));
  });

  return {
    tools,
    instructions,
    async close() {
      await Promise.allSettled(connections.map(closeConnection));
    },
  };
}

/** The toolbox entry: the tools of the configured MCP servers, when there are any. */
export async function mcpToolSet(agent: AgentConfig, context: ToolboxContext): Promise<ToolSet | undefined> {
  if (!agent.mcp_servers?.length) return undefined;
  // Like a model try, a connection or a call never outlives the attempt's silence watchdog.
  const watchdogMs = config.attemptTimeoutSeconds * 1000;
  return openMcpServers(agent.mcp_servers, {
    secrets: context.secrets,
    redactor: context.redactor,
    signal: context.signal,
    connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, watchdogMs / 2),
    callTimeoutMs: Math.min(CALL_TIMEOUT_MS, watchdogMs),
    ...(context.log ? { log: context.log } : {}),
  });
}

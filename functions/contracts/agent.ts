/**
 * The agent configuration: the `agent` object of POST /sessions/{id}, and the `config` of
 * a revision. Everything CONTRACT.md fixes about it is checked here, before anything runs.
 */
import { z } from 'zod';

/** `{{secret:NAME}}`: a whole credential, or embedded in MCP header values and tool options. */
export const SECRET_REFERENCE = /\{\{secret:([A-Za-z0-9_.-]{1,128})\}\}/g;
const WHOLE_REFERENCE = new RegExp(`^${SECRET_REFERENCE.source}$`);
// Anything that opens like a reference must be one; `{{secret:bad name}}` is a typo to report.
const REFERENCE_LIKE = /\{\{\s*secret\b[^}]*\}?\}?/gi;

/** Names of the secrets a string references; throws on a malformed reference. */
export function secretReferences(value: string): string[] {
  const wellFormed = [...value.matchAll(SECRET_REFERENCE)];
  const attempts = value.match(REFERENCE_LIKE) ?? [];
  if (attempts.length !== wellFormed.length) throw new Error(`malformed secret reference in "${attempts.find((a) => !WHOLE_REFERENCE.test(a))}"`);
  return wellFormed.map((match) => match[1]!);
}

/** A string that may embed secret references, all well formed. */
const WithReferences = z.string().superRefine((value, ctx) => {
  try {
    secretReferences(value);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/** A credential: always a whole `{{secret:NAME}}`, never a literal key. */
const Credential = z
  .string()
  .regex(WHOLE_REFERENCE, 'must be a secret reference {{secret:NAME}}, never a literal key');

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);

// A tool's endpoint may carry a secret too (a key in its query string, a token in its path).
const ToolUrl = HttpUrl.and(WithReferences);

export const Provider = z
  .strictObject({
    name: z.enum(['openai', 'anthropic', 'bedrock']),
    credential: Credential.optional(),
    url: HttpUrl.optional(),
  })
  .superRefine((provider, ctx) => {
    // Bedrock runs on the service's own IAM role at the deployment's endpoint: a key or
    // another address would be silently ignored, so it is refused.
    if (provider.name !== 'bedrock') return;
    for (const field of ['credential', 'url'] as const) {
      if (provider[field] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: `bedrock takes no ${field}: it runs with the service's own AWS role and endpoint` });
      }
    }
  });

export const ModelConfig = z.strictObject({
  name: z.string().min(1).max(256),
  provider: Provider,
});

export const TerminalTool = z.strictObject({
  timeout_seconds: z.int().min(1).max(300).optional(),
});

export const WebSearchTool = z
  .strictObject({
    provider: z.enum(['searxng', 'brave', 'tavily']),
    url: ToolUrl.optional(),
    credential: Credential.optional(),
    max_results: z.int().min(1).max(20).optional(),
  })
  // Refused at acceptance rather than failing every search of the run.
  .superRefine((tool, ctx) => {
    if (tool.provider === 'searxng' && tool.url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required for provider searxng: the base URL of the SearXNG instance (its JSON API answers at <url>/search)' });
    }
    if (tool.provider !== 'searxng' && tool.credential === undefined) {
      ctx.addIssue({ code: 'custom', path: ['credential'], message: `is required for provider ${tool.provider}: a secret reference {{secret:NAME}} holding its API key` });
    }
  });

export const McpServer = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 characters of A-Z, a-z, 0-9, _ or -'),
  url: ToolUrl,
  headers: z.record(z.string().min(1).max(256), WithReferences.max(8192)).optional(),
  allowed_tools: z.array(z.string().min(1).max(128)).max(256).optional(),
});

export const OutputFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }),
]);

export const AgentConfig = z.strictObject({
  model: ModelConfig,
  tools: z
    .strictObject({ web_search: WebSearchTool.optional(), terminal: TerminalTool.optional() })
    .optional(),
  memory: z
    .strictObject({
      group: z.string().min(1).max(256),
      generation: z.array(z.enum(['agent', 'session'])).max(2).optional(),
    })
    .optional(),
  system_prompt: z.string().max(100_000).optional(),
  max_steps: z.int().min(1).max(200).optional(),
  mcp_servers: z
    .array(McpServer)
    .max(20)
    .refine((servers) => new Set(servers.map((s) => s.name)).size === servers.length, 'MCP server names must be unique')
    .optional(),
  output_format: OutputFormat.optional(),
  limits: z
    .strictObject({
      max_tokens: z.int().min(1).max(100_000_000).optional()
        .describe('Input plus output tokens over all attempts of one invocation; checked before every model call.'),
      max_duration_seconds: z.int().min(1).max(86_400).optional()
        .describe('From acceptance; checked before every model call and attempt, and calls in flight are abandoned when it passes.'),
    })
    .optional()
    .describe('Bounds of one invocation; reaching one ends it FAILED `interrupted` with a message naming the limit.'),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

/** Every secret an agent configuration references, each once. */
export function referencedSecrets(config: AgentConfig): string[] {
  const strings = [
    config.model.provider.credential,
    config.tools?.web_search?.credential,
    config.tools?.web_search?.url,
    ...(config.mcp_servers ?? []).map((server) => server.url),
    ...(config.mcp_servers ?? []).flatMap((server) => Object.values(server.headers ?? {})),
  ].filter((value): value is string => value !== undefined);
  return [...new Set(strings.flatMap(secretReferences))];
}

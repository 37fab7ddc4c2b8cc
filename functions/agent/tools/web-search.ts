/**
 * The `web_search` tool: one query to SearXNG (its JSON API), Brave Search or Tavily,
 * answered as `{results: [{title, url, snippet}]}` whatever the provider. A failure
 * (HTTP error, unreachable endpoint, timeout, unexpected body) is thrown with a message
 * that names the provider and never holds the credential: the loop hands it to the model
 * as the tool's error.
 */
import type { AgentConfig } from '#contracts/agent';
import type { ToolboxContext, ToolSet } from './types';
import { resolveReferences } from '../secrets';
import type { Tool } from '../types';

type WebSearchConfig = NonNullable<NonNullable<AgentConfig['tools']>['web_search']>;
type SearchProvider = WebSearchConfig['provider'];

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface WebSearchOptions {
  /** Bound of one search request, connection included. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_MAX_RESULTS = 5;
// Enough of an error body to tell the model what went wrong, not a page of HTML.
const ERROR_EXCERPT_CHARS = 300;

// Where each provider answers when the configuration gives no `url` (SearXNG always needs one).
const DEFAULT_BASE: Record<SearchProvider, string | undefined> = {
  searxng: undefined,
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
};

interface Request {
  url: string;
  init: RequestInit;
}

/** The provider's HTTP request for a query (`base` without its trailing slash). */
function requestFor(provider: SearchProvider, base: string, query: string, count: number, credential: string | undefined): Request {
  switch (provider) {
    case 'searxng': {
      // SearXNG has no result count parameter: the answer is cut to `count` here.
      const url = `${base}/search?${new URLSearchParams({ q: query, format: 'json' })}`;
      return { url, init: { method: 'GET', headers: { accept: 'application/json', ...(credential ? { authorization: `Bearer ${credential}` } : {}) } } };
    }
    case 'brave': {
      const url = `${base}/res/v1/web/search?${new URLSearchParams({ q: query, count: String(count) })}`;
      return { url, init: { method: 'GET', headers: { accept: 'application/json', 'x-subscription-token': credential ?? '' } } };
    }
    case 'tavily':
      return {
        url: `${base}/search`,
        init: {
          method: 'POST',
          headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${credential ?? ''}` },
          body: JSON.stringify({ query, max_results: count }),
        },
      };
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Each provider's result list, as `[{title, url, snippet}]`. */
function normalize(provider: SearchProvider, body: unknown): SearchResult[] {
  const record = (body ?? {}) as Record<string, unknown>;
  const list = provider === 'brave' ? ((record.web ?? {}) as Record<string, unknown>).results ?? [] : record.results;
  if (!Array.isArray(list)) throw new Error(`web search (${provider}) answered without a result list`);
  return list
    .filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null && typeof (item as { url?: unknown }).url === 'string')
    .map((item) => ({
      title: text(item.title),
      url: item.url as string,
      // SearXNG and Tavily call it `content`, Brave `description`.
      snippet: text(provider === 'brave' ? item.description : item.content),
    }));
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.message === 'string' && cause.message !== '' ? cause.message : typeof cause?.code === 'string' ? cause.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return detail ? `${message} (${detail})` : message;
}

/** The `web_search` tool for this configuration (`url` and `credential` with their secret references resolved). */
export function createWebSearchTool(config: WebSearchConfig, credential: string | undefined, options: WebSearchOptions = {}): Tool {
  const { provider } = config;
  const maxResults = config.max_results ?? DEFAULT_MAX_RESULTS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const base = (config.url ?? DEFAULT_BASE[provider] ?? '').replace(/\/+$/, '');
  if (base === '') throw new Error(`web search provider ${provider} needs a url`);
  // Whatever an endpoint echoes back, the credential never reaches a message.
  const scrub = (message: string) => (credential ? message.split(credential).join('[credential]') : message);

  return {
    name: 'web_search',
    description: `Searches the web and returns up to ${maxResults} results, each with a title, a URL and a snippet.`,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'What to search for.' },
        count: { type: 'integer', minimum: 1, maximum: maxResults, description: `How many results to return (at most ${maxResults}, the default).` },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async call(args, context) {
      const { query, count } = (args ?? {}) as { query?: unknown; count?: unknown };
      if (typeof query !== 'string' || query.trim() === '') throw new Error('web_search needs a non-empty "query" string');
      if (count !== undefined && (typeof count !== 'number' || !Number.isInteger(count) || count < 1)) {
        throw new Error('"count" must be a positive integer');
      }
      const wanted = Math.min(count ?? maxResults, maxResults);
      const { url, init } = requestFor(provider, base, query, wanted, credential);
      const timeout = AbortSignal.timeout(timeoutMs);
      let response: Response;
      let body: string;
      try {
        response = await fetch(url, { ...init, signal: AbortSignal.any([context.signal, timeout]) });
        body = await response.text();
      } catch (error) {
        // The attempt stopping is not a search failure: the loop sees the abort itself.
        context.signal.throwIfAborted();
        if (timeout.aborted) throw new Error(`web search (${provider}) did not answer within ${timeoutMs / 1000} s`);
        throw new Error(scrub(`web search (${provider}) could not be reached: ${causeOf(error)}`));
      }
      if (!response.ok) {
        const excerpt = body.replace(/\s+/g, ' ').trim().slice(0, ERROR_EXCERPT_CHARS);
        throw new Error(scrub(`web search (${provider}) answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`));
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new Error(`web search (${provider}) answered with a body that is not JSON`);
      }
      return { results: normalize(provider, parsed).slice(0, wanted) };
    },
  };
}

/** The toolbox entry: the `web_search` tool when the configuration asks for it. */
export async function webSearchToolSet(agent: AgentConfig, context: ToolboxContext): Promise<ToolSet | undefined> {
  const config = agent.tools?.web_search;
  if (!config) return undefined;
  const credential = config.credential === undefined ? undefined : resolveReferences(config.credential, context.secrets);
  const url = config.url === undefined ? undefined : resolveReferences(config.url, context.secrets);
  return { tools: [createWebSearchTool({ ...config, ...(url === undefined ? {} : { url }) }, credential)] };
}

/**
 * The `anthropic` provider: the Messages API through the official SDK, with tool use.
 * Rate limits, overload (529) and server errors are retried with backoff by the SDK
 * inside the attempt; what still fails becomes a `ProviderError`.
 */
import Anthropic, { APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
} from '@anthropic-ai/sdk/resources/messages';
import { ProviderError } from '../errors';
import type { ModelProvider, ModelRequest, ModelResponse } from '../types';
import { toTurns, type TurnBlock } from './turns';

const ANTHROPIC_DEFAULT_URL = 'https://api.anthropic.com';

// Three tries in all, backing off 0.5 s then 1 s (or as the server's Retry-After says).
const MAX_RETRIES = 2;
// Per try; the attempt's own watchdog bounds the rest.
const DEFAULT_TIMEOUT_MS = 300_000;
// The API requires a bound. 4096 is the most every Claude model accepts; an agent's
// steps are tool calls and answers, not documents.
const MAX_TOKENS = 4096;

export interface AnthropicProviderOptions {
  url?: string;
  /** The resolved API key, sent as `x-api-key`; without one no key header is sent (local gateways). */
  credential?: string;
  timeoutMs?: number;
}

function toBlock(block: TurnBlock): ContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: block.id, content: block.content };
  }
}

function toMessages(request: ModelRequest): MessageParam[] {
  return toTurns(request.messages).map(({ role, blocks }) => ({
    role,
    // A lone text stays a plain string: the recorded request reads like the conversation.
    content: blocks.length === 1 && blocks[0]!.type === 'text' ? blocks[0]!.text : blocks.map(toBlock),
  }));
}

function requestBody(request: ModelRequest): MessageCreateParamsNonStreaming {
  return {
    model: request.model,
    max_tokens: MAX_TOKENS,
    ...(request.system !== undefined && request.system !== '' ? { system: request.system } : {}),
    messages: toMessages(request),
    ...(request.tools.length
      ? {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.parameters as { type: 'object'; [key: string]: unknown },
          })),
        }
      : {}),
    ...(request.responseFormat ? { output_config: { format: { type: 'json_schema' as const, schema: request.responseFormat.schema } } } : {}),
  };
}

function fromMessage(message: Message): ModelResponse {
  if (!Array.isArray(message?.content)) throw new ProviderError('anthropic returned a message without content', 'anthropic', false);
  const texts = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
  const usage = message.usage;
  return {
    text: texts.length ? texts.join('') : null,
    toolCalls: message.content.flatMap((block) =>
      block.type === 'tool_use' ? [{ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) }] : [],
    ),
    // Prompt-cache reads and writes are input the model read too.
    usage: {
      input_tokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + (usage?.cache_read_input_tokens ?? 0),
      output_tokens: usage?.output_tokens ?? 0,
    },
    response: message,
  };
}

/** The SDK's error as a `ProviderError`, with the credential cut out of anything the server echoed. */
function toProviderError(error: unknown, credential: string | undefined): ProviderError {
  const scrub = (text: string) => (credential ? text.replaceAll(credential, '[REDACTED]') : text);
  if (error instanceof APIConnectionTimeoutError) return new ProviderError('anthropic did not answer in time', 'anthropic', true);
  if (error instanceof APIError && error.status !== undefined) {
    const status = error.status;
    // 529 is Anthropic's "overloaded"; 408 and 409 are what the SDK itself retries.
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const detail = error.apiMessage ? `${error.type ? `${error.type}: ` : ''}${error.apiMessage}` : error.message;
    return new ProviderError(`anthropic answered HTTP ${status} ${scrub(detail)}`, 'anthropic', retryable, status);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ProviderError(`anthropic could not be reached: ${scrub(reason)}`, 'anthropic', true);
}

/**
 * Header names ANTHROPIC_CUSTOM_HEADERS adds: the SDK reads that variable whatever the
 * options say, so each name it lists is cleared again (a null default header).
 */
function environmentHeaders(): Record<string, null> {
  const lines = (process.env.ANTHROPIC_CUSTOM_HEADERS ?? '').split('\n');
  return Object.fromEntries(lines.filter((line) => line.includes(':')).map((line) => [line.slice(0, line.indexOf(':')).trim(), null]));
}

/** A provider for the Anthropic Messages API at `url` (default: the public API). */
export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  // Every option is explicit so that ANTHROPIC_* variables and profile files of the process
  // can never redirect the call, add a credential or headers, or turn on request logs or
  // tracing. An API key given in code keeps the SDK from looking for any other credential;
  // the key travels as x-api-key, the Messages API's own header, and nothing else.
  const client = new Anthropic({
    apiKey: options.credential ?? 'none',
    baseURL: options.url ?? ANTHROPIC_DEFAULT_URL,
    webhookKey: null,
    maxRetries: MAX_RETRIES,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    logLevel: 'off',
    openTelemetry: false,
    defaultHeaders: { ...environmentHeaders(), Authorization: null, 'x-api-key': options.credential ?? null },
  });
  return {
    body: requestBody,
    async complete(request, signal) {
      let message: Message;
      try {
        message = await client.messages.create(requestBody(request), { signal });
      } catch (error) {
        // Stopped by the caller: not a provider failure, and the caller knows why.
        signal?.throwIfAborted();
        throw toProviderError(error, options.credential);
      }
      return fromMessage(message);
    },
  };
}

/**
 * The `openai` provider: any OpenAI-compatible Chat Completions endpoint, through the
 * official SDK, with function calling. Rate limits and server errors are retried with
 * backoff by the SDK inside the attempt; what still fails becomes a `ProviderError`.
 */
import OpenAI, { APIConnectionTimeoutError, APIError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { ProviderError } from '../errors';
import type { ConversationMessage, ModelProvider, ModelRequest, ModelResponse } from '../types';

const OPENAI_DEFAULT_URL = 'https://api.openai.com/v1';

// Three tries in all, backing off 0.5 s then 1 s (or as the server's Retry-After says).
const MAX_RETRIES = 2;
// Per try. Reasoning models can think for minutes; the attempt's own watchdog bounds the rest.
const DEFAULT_TIMEOUT_MS = 300_000;

export interface OpenAIProviderOptions {
  url?: string;
  /** The resolved API key; without one no Authorization header is sent (local servers). */
  credential?: string;
  timeoutMs?: number;
}

function toMessage(message: ConversationMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls?.length
          ? {
              tool_calls: message.tool_calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
  }
}

function requestBody(request: ModelRequest): ChatCompletionCreateParamsNonStreaming {
  return {
    model: request.model,
    messages: [
      ...(request.system !== undefined ? [{ role: 'system' as const, content: request.system }] : []),
      ...request.messages.map(toMessage),
    ],
    // An empty `tools` array is refused by the OpenAI API, so it is left out.
    ...(request.tools.length
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function' as const,
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
        }
      : {}),
    ...(request.responseFormat
      ? { response_format: { type: 'json_schema' as const, json_schema: { name: 'answer', schema: request.responseFormat.schema } } }
      : {}),
  };
}

function fromCompletion(completion: ChatCompletion): ModelResponse {
  const message = completion.choices?.[0]?.message;
  if (!message) throw new ProviderError('openai returned a completion without choices', 'openai', false);
  return {
    text: message.content ?? null,
    toolCalls: (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : [],
    ),
    usage: { input_tokens: completion.usage?.prompt_tokens ?? 0, output_tokens: completion.usage?.completion_tokens ?? 0 },
    response: completion,
  };
}

/** The SDK's error as a `ProviderError`, with the credential cut out of anything the server echoed. */
function toProviderError(error: unknown, credential: string | undefined): ProviderError {
  const scrub = (text: string) => (credential ? text.replaceAll(credential, '[REDACTED]') : text);
  if (error instanceof APIConnectionTimeoutError) return new ProviderError('openai did not answer in time', 'openai', true);
  if (error instanceof APIError && error.status !== undefined) {
    const retryable = error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500;
    return new ProviderError(`openai answered HTTP ${scrub(error.message)}`, 'openai', retryable, error.status);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ProviderError(`openai could not be reached: ${scrub(reason)}`, 'openai', true);
}

/** A provider for an OpenAI-compatible Chat Completions endpoint (default: the public OpenAI API). */
export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  // Every option is explicit so that OPENAI_* variables of the process can never redirect
  // the call, add an organization header or turn on the SDK's plain-text request logs.
  const client = new OpenAI({
    apiKey: options.credential ?? 'none',
    baseURL: options.url ?? OPENAI_DEFAULT_URL,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: MAX_RETRIES,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    logLevel: 'off',
    ...(options.credential === undefined ? { defaultHeaders: { Authorization: null } } : {}),
  });
  return {
    body: requestBody,
    async complete(request, signal) {
      let completion: ChatCompletion;
      try {
        completion = await client.chat.completions.create(requestBody(request), { signal });
      } catch (error) {
        // Stopped by the caller: not a provider failure, and the caller knows why.
        signal?.throwIfAborted();
        throw toProviderError(error, options.credential);
      }
      return fromCompletion(completion);
    },
  };
}

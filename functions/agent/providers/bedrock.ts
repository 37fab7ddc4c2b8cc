/**
 * The `bedrock` provider: Amazon Bedrock's Converse API with the function's own IAM role,
 * never a credential of the organization. The endpoint and region come from the standard
 * SDK variables (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_REGION); throttling and server
 * errors are retried by the SDK's standard strategy; what still fails becomes a
 * `ProviderError`.
 */
import {
  BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  ConverseCommand,
  type ContentBlock,
  type ConverseCommandInput,
  type ConverseCommandOutput,
  type Message,
} from '@aws-sdk/client-bedrock-runtime';
import { ProviderError } from '../errors';
import type { ModelProvider, ModelRequest, ModelResponse } from '../types';
import { toTurns, type TurnBlock } from './turns';

/** The SDK's type of free-form JSON (tool inputs and schemas); ours is plain JSON too. */
type Document = NonNullable<ContentBlock.ToolUseMember['toolUse']['input']>;

// Three tries in all, the standard strategy's backoff between them.
const MAX_ATTEMPTS = 3;
// Per try; the attempt's own watchdog bounds the rest.
const DEFAULT_TIMEOUT_MS = 300_000;
// Converse needs no bound, but models' own defaults vary widely; the same as `anthropic`.
const MAX_TOKENS = 4096;

// Errors a new attempt may fare better with; every other service error is final.
const RETRYABLE_ERRORS = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'ModelNotReadyException',
  'InternalServerException',
  'ModelTimeoutException',
]);

export interface BedrockProviderOptions {
  timeoutMs?: number;
}

// One client per try timeout, made on first use and kept for the process (in practice one).
const clients = new Map<number, BedrockRuntimeClient>();

function clientFor(timeoutMs: number): BedrockRuntimeClient {
  let client = clients.get(timeoutMs);
  if (!client) {
    client = new BedrockRuntimeClient({
      maxAttempts: MAX_ATTEMPTS,
      retryMode: 'standard',
      // Signed with the role's credentials only: AWS_BEARER_TOKEN_BEDROCK (a Bedrock API
      // key in the environment) would otherwise take precedence.
      authSchemePreference: ['sigv4'],
      requestHandler: { requestTimeout: timeoutMs },
    });
    clients.set(timeoutMs, client);
  }
  return client;
}

function toBlock(block: TurnBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return { text: block.text };
    case 'tool_use':
      return { toolUse: { toolUseId: block.id, name: block.name, input: block.input as Document } };
    case 'tool_result':
      return { toolResult: { toolUseId: block.id, content: [{ text: block.content }] } };
  }
}

function requestBody(request: ModelRequest): ConverseCommandInput {
  const messages: Message[] = toTurns(request.messages).map(({ role, blocks }) => ({ role, content: blocks.map(toBlock) }));
  return {
    modelId: request.model,
    messages,
    ...(request.system !== undefined && request.system !== '' ? { system: [{ text: request.system }] } : {}),
    inferenceConfig: { maxTokens: MAX_TOKENS },
    // An empty tool list is refused by Converse, so it is left out.
    ...(request.tools.length
      ? {
          toolConfig: {
            tools: request.tools.map((tool) => ({
              toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.parameters as Document } },
            })),
          },
        }
      : {}),
    ...(request.responseFormat
      ? {
          outputConfig: {
            textFormat: { type: 'json_schema', structure: { jsonSchema: { name: 'answer', schema: JSON.stringify(request.responseFormat.schema) } } },
          },
        }
      : {}),
  };
}

function fromOutput(output: ConverseCommandOutput): ModelResponse {
  const content = output.output?.message?.content;
  if (!Array.isArray(content)) throw new ProviderError('bedrock returned a response without a message', 'bedrock', false);
  const texts = content.flatMap((block) => (block.text !== undefined ? [block.text] : []));
  const usage = output.usage;
  // The SDK's request bookkeeping is no part of what the model said.
  const { $metadata: _metadata, ...response } = output;
  return {
    text: texts.length ? texts.join('') : null,
    toolCalls: content.flatMap((block) =>
      block.toolUse ? [{ id: block.toolUse.toolUseId ?? '', name: block.toolUse.name ?? '', arguments: JSON.stringify(block.toolUse.input ?? {}) }] : [],
    ),
    // Prompt-cache reads and writes are input the model read too.
    usage: {
      input_tokens: (usage?.inputTokens ?? 0) + (usage?.cacheReadInputTokens ?? 0) + (usage?.cacheWriteInputTokens ?? 0),
      output_tokens: usage?.outputTokens ?? 0,
    },
    response,
  };
}

/** The SDK's error as a `ProviderError`. */
function toProviderError(error: unknown): ProviderError {
  if (error instanceof BedrockRuntimeServiceException) {
    const status = error.$metadata.httpStatusCode;
    const retryable = RETRYABLE_ERRORS.has(error.name) || status === 429 || (status !== undefined && status >= 500);
    return new ProviderError(`bedrock answered ${error.name}${status ? ` (HTTP ${status})` : ''}: ${error.message}`, 'bedrock', retryable, status);
  }
  // No answer at all: a timeout, a refused or dropped connection.
  if (error instanceof Error && error.name === 'TimeoutError') return new ProviderError('bedrock did not answer in time', 'bedrock', true);
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new ProviderError(`bedrock could not be reached: ${reason}`, 'bedrock', true);
}

/** A provider for Bedrock's Converse API, signed with the process's AWS credentials. */
export function createBedrockProvider(options: BedrockProviderOptions = {}): ModelProvider {
  const client = clientFor(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return {
    body: requestBody,
    async complete(request, signal) {
      let output: ConverseCommandOutput;
      try {
        output = await client.send(new ConverseCommand(requestBody(request)), { abortSignal: signal });
      } catch (error) {
        // Stopped by the caller: not a provider failure, and the caller knows why.
        signal?.throwIfAborted();
        throw toProviderError(error);
      }
      return fromOutput(output);
    },
  };
}

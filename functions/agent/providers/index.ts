/**
 * Model providers by `model.provider.name`, one factory for each name in
 * `AVAILABLE_PROVIDERS` (which the run route checks without loading this module).
 */
import { InvalidInputError } from '#core/errors';
import type { AgentConfig } from '#contracts/agent';
import type { ModelProvider } from '../types';
import { createAnthropicProvider } from './anthropic';
import type { ProviderName } from './available';
import { createBedrockProvider } from './bedrock';
import { createOpenAIProvider } from './openai';

type ProviderConfig = AgentConfig['model']['provider'];

export interface ProviderOptions {
  /** Per-request timeout of one try, in milliseconds. */
  timeoutMs?: number;
}

type ProviderFactory = (config: ProviderConfig, credential: string | undefined, options: ProviderOptions) => ModelProvider;

const factories: Partial<Record<ProviderName, ProviderFactory>> = {
  openai: (config, credential, options) => createOpenAIProvider({ url: config.url, credential, timeoutMs: options.timeoutMs }),
  anthropic: (config, credential, options) => createAnthropicProvider({ url: config.url, credential, timeoutMs: options.timeoutMs }),
  // The configuration schema refuses a credential or url for bedrock: the role signs, the environment points.
  bedrock: (_config, _credential, options) => createBedrockProvider({ timeoutMs: options.timeoutMs }),
};

/** The provider for `model.provider`, given its resolved credential. */
export function createProvider(config: ProviderConfig, credential?: string, options: ProviderOptions = {}): ModelProvider {
  const factory = factories[config.name];
  if (!factory) throw new InvalidInputError(`model provider ${config.name} is not available in this deployment`);
  return factory(config, credential, options);
}

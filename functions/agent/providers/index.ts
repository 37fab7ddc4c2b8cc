/**
 * Model providers by `model.provider.name`. Only `openai` is wired so far; the
 * configuration check asks `isProviderAvailable` so a run never starts on a provider
 * this deployment cannot call.
 */
import { InvalidInputError } from '#core/errors';
import type { AgentConfig } from '#contracts/agent';
import type { ModelProvider } from '../types';
import { createOpenAIProvider } from './openai';

type ProviderConfig = AgentConfig['model']['provider'];

export interface ProviderOptions {
  /** Per-request timeout of one try, in milliseconds. */
  timeoutMs?: number;
}

type ProviderFactory = (config: ProviderConfig, credential: string | undefined, options: ProviderOptions) => ModelProvider;

const factories: Partial<Record<ProviderConfig['name'], ProviderFactory>> = {
  openai: (config, credential, options) => createOpenAIProvider({ url: config.url, credential, timeoutMs: options.timeoutMs }),
};

/** Whether this deployment can run agents on the named provider. */
export function isProviderAvailable(name: ProviderConfig['name']): boolean {
  return factories[name] !== undefined;
}

/** The provider for `model.provider`, given its resolved credential. */
export function createProvider(config: ProviderConfig, credential?: string, options: ProviderOptions = {}): ModelProvider {
  const factory = factories[config.name];
  if (!factory) throw new InvalidInputError(`model provider ${config.name} is not available in this deployment`);
  return factory(config, credential, options);
}

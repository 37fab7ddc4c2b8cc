/**
 * The providers this deployment can call, apart from their SDKs: the run route checks a
 * configuration against this list without loading any provider code.
 */
import type { AgentConfig } from '#contracts/agent';

export type ProviderName = AgentConfig['model']['provider']['name'];

export const AVAILABLE_PROVIDERS: readonly ProviderName[] = ['openai', 'anthropic', 'bedrock'];

/** Whether this deployment can run agents on the named provider. */
export function isProviderAvailable(name: ProviderName): boolean {
  return AVAILABLE_PROVIDERS.includes(name);
}

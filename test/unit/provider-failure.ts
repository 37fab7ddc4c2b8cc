/** What the provider unit tests share: the ProviderError a call must end with. */
import { expect } from 'vitest';
import { ProviderError } from '#functions/agent/errors';

/** The error `promise` rejects with, asserting it is a ProviderError (a resolve fails the test). */
export async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

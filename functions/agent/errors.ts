/**
 * Errors that end an attempt. Tool failures are not among them: those go back to the
 * model as tool results.
 */

/**
 * The model provider failed after its client's own retries. `retryable` says whether a
 * new attempt may fare better (rate limit, server error, timeout, connection) or not
 * (bad request, bad credential, unknown model). The message never holds the credential.
 */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    message: string,
    readonly provider: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The attempt made `max_steps` model calls without reaching a final answer. */
export class MaxStepsError extends Error {
  override name = 'MaxStepsError';
  constructor(readonly maxSteps: number) {
    super(`the agent reached max_steps (${maxSteps}) without a final answer`);
  }
}

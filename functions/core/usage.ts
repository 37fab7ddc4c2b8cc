/** Token usage summed over attempts. */
import type { Attempt, Usage } from './model';

/** The usage of all attempts together. */
export function totalUsage(attempts: Pick<Attempt, 'usage'>[]): Usage {
  return attempts.reduce(
    (sum, attempt) => ({ input_tokens: sum.input_tokens + attempt.usage.input_tokens, output_tokens: sum.output_tokens + attempt.usage.output_tokens }),
    { input_tokens: 0, output_tokens: 0 },
  );
}

/**
 * Spans as they happen: metadata in the table (readable within seconds, expiring with
 * the retention window), payloads in the bucket with their size and digest, and the
 * `llm_call`/`tool_result` audit events when a span ends. Every item is written only while
 * its attempt is RUNNING: a harness still at work after its attempt was settled or its
 * session deleted (on AWS a stopped execution does not stop a Lambda mid-run) must not
 * leave records behind. Every path that ends an invocation ends its attempts first.
 *
 * One span event is one transaction, its payload put alongside. With `holdEnds`, a span's
 * end waits for the next write (the next span's start, a flush or the attempt's end), so a
 * step of a model call and a tool call costs two transactions: the model call's end with
 * the tool call's start, and the tool call's end with the next model call's start and the
 * step's progress stamp. Each write then waits for its transaction and for the payloads
 * of the write before it, so the bucket's latency is off the step's path; a flush and the
 * attempt's end wait for everything.
 */
import { config } from '#kit/config';
import { InvocationEndedError } from '#core/errors';
import { eventTime, sha256 } from '#kit/ids';
import { spansExpireAt } from '#kit/retention';
import { progressUpdate, runningAttempt, successUpdate } from './attempts';
import { cancellationReasons, transactWrite } from './dynamo';
import { auditItem, outcomeItems } from './invocations';
import type { InvocationFacts, Usage } from '#core/model';
import type { AttemptRecorder, AttemptSuccess, RecorderOptions } from '#core/run-attempt';
import { keys } from './keys';
import { payloadKey, putJson } from './payloads';

export interface SpanStartRecord {
  id: string;
  type: 'model_call' | 'tool_call';
  name: string;
  parent_id: string | null;
  input: unknown;
}

export interface SpanEndRecord {
  status: 'SUCCEEDED' | 'FAILED';
  output: unknown;
  usage: { input_tokens: number; output_tokens: number } | null;
}

/** `inv-3.att-1.7` → attempt 1, seq 7. */
function position(spanId: string): { attempt: number; seq: number } {
  const match = /^inv-\d+\.att-(\d+)\.(\d+)$/.exec(spanId);
  if (!match) throw new Error(`not a span id: ${spanId}`);
  return { attempt: Number(match[1]), seq: Number(match[2]) };
}

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

/**
 * A recorder of one attempt's spans; every value it receives is already redacted. Each
 * write holds only while the attempt is RUNNING: an attempt ends before its invocation
 * does (settled, interrupted, or with the outcome), so this guards the invocation too.
 */
export function spanStore(organizationId: string, invocation: InvocationFacts, attempt: number, options: RecorderOptions = {}): AttemptRecorder {
  const key = invocation.invocation_key;
  const expiresAt = spansExpireAt(invocation.started_at);
  // What the audit event of a span's end names, kept from its start: a step starts and
  // ends its spans in the same slice, so ending one needs no read.
  const started = new Map<string, Pick<SpanStartRecord, 'type' | 'name'>>();
  let held: TransactItem[] = [];
  let heldPayloads: Promise<void>[] = [];
  let heldProgress: { steps: number; usage: Usage } | undefined;

  /** The position of one of this attempt's spans. */
  function seqOf(spanId: string): number {
    const span = position(spanId);
    if (span.attempt !== attempt) throw new Error(`span ${spanId} is not of attempt ${attempt}`);
    return span.seq;
  }

  /** Stores a payload (started now) and returns what describes it on the span item. */
  function storePayload(spanId: string, part: 'input' | 'output', value: unknown) {
    const body = JSON.stringify(value ?? null);
    heldPayloads.push(putJson(payloadKey(organizationId, key, spanId, part), body));
    return { bytes: Buffer.byteLength(body, 'utf8'), sha256: sha256(body) };
  }

  // Payload puts that went out with the last write. The next write waits for them, so a
  // step's write waits only for its transaction while its payloads land.
  let landing: Promise<void>[] = [];

  /**
   * Writes what is held plus `items` in one transaction, sending the payload puts
   * alongside. The guard is the held progress stamp (an update of the running attempt) or
   * else a check that the attempt runs, unless `items` carry a guard of their own
   * (`guarded`). It waits for the previous write's payloads, and for its own with `drain`
   * or when ends are not held (each call then returns with its records in place).
   */
  async function write(items: TransactItem[], { guarded = false, drain = !options.holdEnds } = {}): Promise<void> {
    const payloads = heldPayloads;
    const progress = heldProgress;
    const pending = [...held, ...items];
    const earlier = landing;
    held = [];
    heldPayloads = [];
    heldProgress = undefined;
    // Handled here so a put failing before it is awaited is no unhandled rejection; the
    // write that awaits it still sees the failure.
    for (const put of payloads) put.catch(() => undefined);
    landing = drain ? [] : payloads;
    const awaited = drain ? [...earlier, ...payloads] : earlier;
    if (pending.length === 0 && !progress) {
      await throwFirstFailure(awaited);
      return;
    }
    const guard: TransactItem = progress
      ? { Update: progressUpdate(organizationId, key, attempt, progress) }
      : { ConditionCheck: runningAttempt(organizationId, key, attempt) };
    const transaction = transactWrite({ TransactItems: guarded ? pending : [guard, ...pending] }).catch((error: unknown) => {
      // The attempt was settled, the invocation ended, or the item a span end updates is gone with it.
      if (cancellationReasons(error)?.some((reason) => reason.code === 'ConditionalCheckFailed')) {
        throw new InvocationEndedError(`invocation ${key} is no longer running`);
      }
      throw error;
    });
    await throwFirstFailure([transaction, ...awaited]);
    options.onWrite?.();
  }

  return {
    /** Records a span as RUNNING (with anything held). */
    async start(span: SpanStartRecord): Promise<void> {
      const seq = seqOf(span.id);
      const input = storePayload(span.id, 'input', span.input);
      started.set(span.id, { type: span.type, name: span.name });
      await write([
        {
          Put: {
            TableName: config.tableName,
            Item: {
              ...keys.span(organizationId, key, attempt, seq),
              type: 'Span',
              id: span.id,
              span_type: span.type,
              name: span.name,
              parent_id: span.parent_id,
              attempt,
              status: 'RUNNING',
              started_at: eventTime(),
              usage: null,
              input_bytes: input.bytes,
              input_sha256: input.sha256,
              expires_at: expiresAt,
            },
          },
        },
      ]);
    },

    /** Records a span's end and its audit event: at once, or with the next write when ends are held. */
    async end(spanId: string, outcome: SpanEndRecord): Promise<void> {
      const seq = seqOf(spanId);
      const span = started.get(spanId);
      if (!span) throw new Error(`span ${spanId} was not started by this recorder`);
      started.delete(spanId);
      const output = storePayload(spanId, 'output', outcome.output);
      const endedAt = eventTime();
      const event = span.type === 'tool_call'
        ? { type: 'tool_result' as const, payload: { span_id: spanId, tool: span.name, status: outcome.status } }
        : { type: 'llm_call' as const, payload: { span_id: spanId, model: span.name, status: outcome.status, usage: outcome.usage } };
      held.push(
        {
          Update: {
            TableName: config.tableName,
            Key: keys.span(organizationId, key, attempt, seq),
            UpdateExpression: 'SET #status = :status, ended_at = :ended, #usage = :usage, output_bytes = :bytes, output_sha256 = :sha',
            // Never recreate a span its invocation's deletion removed.
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#status': 'status', '#usage': 'usage' },
            ExpressionAttributeValues: { ':status': outcome.status, ':ended': endedAt, ':usage': outcome.usage, ':bytes': output.bytes, ':sha': output.sha256 },
          },
        },
        { Put: { TableName: config.tableName, Item: auditItem(organizationId, invocation, event, endedAt) } },
      );
      if (!options.holdEnds) await write([]);
    },

    /** Holds an attempt's progress stamp (steps and usage so far) for the next write. */
    progress(progress: { steps: number; usage: Usage }): void {
      heldProgress = progress;
    },

    /** Writes whatever is held and waits for every payload to land. */
    flush(): Promise<void> {
      return write([], { drain: true });
    },

    /**
     * Writes what is held with the attempt's success and the invocation's outcome (its
     * answer as the assistant message, the session released, `run_succeeded`), in one transaction.
     */
    async succeed(success: AttemptSuccess): Promise<{ ended_at: string }> {
      heldProgress = undefined;
      const endedAt = eventTime();
      const [invocationUpdate, ...outcome] = outcomeItems({
        organizationId,
        invocation,
        endedAt,
        answer: success.answer,
        messageCount: success.userCursor,
        usage: success.totalUsage,
      });
      // The attempt's success and the outcome's own update hold only while each runs: they are the guard.
      await write(
        [invocationUpdate!, { Update: successUpdate(organizationId, key, attempt, { steps: success.steps, usage: success.usage, answer: success.answer, ended_at: endedAt }) }, ...outcome],
        { guarded: true, drain: true },
      );
      return { ended_at: endedAt };
    },
  };
}

/** Waits for all of `work`; throws the first failure once all have settled. */
async function throwFirstFailure(work: Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(work);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}

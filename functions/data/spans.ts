/**
 * Spans as they happen: metadata in the table (readable within seconds, expiring with
 * the retention window), payloads in the bucket with their size and digest, and the
 * `llm_call`/`tool_result` audit events when a span ends. Every item is written only while
 * the invocation is RUNNING: a harness still at work after its session was deleted (on AWS
 * a stopped execution does not stop a Lambda mid-run) must not leave records behind.
 *
 * One span event is one transaction, its payload put alongside. With `holdEnds`, a span's
 * end waits for the next write (the next span's start, a flush or the attempt's end), so a
 * step of a model call and a tool call costs two transactions: the model call's end with
 * the tool call's start, and the tool call's end with the next model call's start and the
 * step's progress stamp.
 */
import { config } from '#kit/config';
import { InvocationEndedError } from '#core/errors';
import { eventTime, sha256 } from '#kit/ids';
import { spansExpireAt } from '#kit/retention';
import { progressUpdate, successUpdate } from './attempts';
import { cancellationReasons, transactWrite } from './dynamo';
import { auditItem, outcomeItems, runningInvocation } from './invocations';
import type { InvocationFacts, Usage } from '#core/model';
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

/** How a successful attempt ends its invocation, written with the attempt's last spans. */
export interface AttemptSuccess {
  attempt: number;
  steps: number;
  /** This attempt's usage. */
  usage: Usage;
  /** The usage of every attempt, this one included (the audit event's). */
  totalUsage: Usage;
  answer: string;
  /** The cursor of the invocation's user message: the session's message count while it runs. */
  userCursor: number;
}

/** `inv-3.att-1.7` → attempt 1, seq 7. */
function position(spanId: string): { attempt: number; seq: number } {
  const match = /^inv-\d+\.att-(\d+)\.(\d+)$/.exec(spanId);
  if (!match) throw new Error(`not a span id: ${spanId}`);
  return { attempt: Number(match[1]), seq: Number(match[2]) };
}

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

export interface SpanStoreOptions {
  /** Hold span ends for the next write instead of writing each at once. */
  holdEnds?: boolean;
  /** Called after every write that reached the table: the run made progress. */
  onWrite?(): void;
}

/** A recorder of one invocation's spans; every value it receives is already redacted. */
export function spanStore(organizationId: string, invocation: InvocationFacts, options: SpanStoreOptions = {}) {
  const key = invocation.invocation_key;
  const expiresAt = spansExpireAt(invocation.started_at);
  // What the audit event of a span's end names, kept from its start: a step starts and
  // ends its spans in the same slice, so ending one needs no read.
  const started = new Map<string, Pick<SpanStartRecord, 'type' | 'name'>>();
  let held: TransactItem[] = [];
  let heldPayloads: Promise<void>[] = [];
  let heldProgress: { attempt: number; steps: number; usage: Usage } | undefined;

  /** Stores a payload (started now) and returns what describes it on the span item. */
  function storePayload(spanId: string, part: 'input' | 'output', value: unknown) {
    const body = JSON.stringify(value ?? null);
    heldPayloads.push(putJson(payloadKey(organizationId, key, spanId, part), body));
    return { bytes: Buffer.byteLength(body, 'utf8'), sha256: sha256(body) };
  }

  /**
   * Writes what is held plus `items` in one transaction, beside the payload puts, guarded
   * by `guard` (the invocation still RUNNING unless the items carry that condition).
   */
  async function write(items: TransactItem[], guard: TransactItem[] = [{ ConditionCheck: runningInvocation(organizationId, key) }]): Promise<void> {
    const progress = heldProgress ? [{ Update: progressUpdate(organizationId, key, heldProgress.attempt, heldProgress) }] : [];
    const all = [...guard, ...held, ...progress, ...items];
    const payloads = heldPayloads;
    held = [];
    heldPayloads = [];
    heldProgress = undefined;
    if (all.length === guard.length && payloads.length === 0) return;
    const transaction = transactWrite({ TransactItems: all }).catch((error: unknown) => {
      // The invocation has ended, the attempt was settled, or the item a span end updates is gone with it.
      if (cancellationReasons(error)?.some((reason) => reason.code === 'ConditionalCheckFailed')) {
        throw new InvocationEndedError(`invocation ${key} is no longer running`);
      }
      throw error;
    });
    const results = await Promise.allSettled([transaction, ...payloads]);
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
    options.onWrite?.();
  }

  return {
    /** Records a span as RUNNING (with anything held). */
    async start(span: SpanStartRecord): Promise<void> {
      const { attempt, seq } = position(span.id);
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
      const { attempt, seq } = position(spanId);
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
    progress(attempt: number, progress: { steps: number; usage: Usage }): void {
      heldProgress = { attempt, ...progress };
    },

    /** Writes whatever is held. */
    flush(): Promise<void> {
      return write([]);
    },

    /**
     * Writes what is held with the attempt's success and the invocation's outcome (its
     * answer as the assistant message, the session released, `run_succeeded`), in one transaction.
     */
    async succeed(success: AttemptSuccess): Promise<void> {
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
      await write(
        [{ Update: successUpdate(organizationId, key, success.attempt, { steps: success.steps, usage: success.usage, answer: success.answer, ended_at: endedAt }) }, ...outcome],
        // The outcome's own update holds only while the invocation runs: it is the guard.
        [invocationUpdate!],
      );
    },
  };
}

/** A recorder of one invocation's spans (see `spanStore`). */
export type SpanStore = ReturnType<typeof spanStore>;

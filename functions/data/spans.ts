/**
 * Spans as they happen: metadata in the table (readable within seconds, expiring with
 * the retention window), payloads in the bucket with their size and digest, and the
 * `llm_call`/`tool_result` audit events when a span ends. Every item is written only while
 * the invocation is RUNNING: a harness still at work after its session was deleted (on AWS
 * a stopped execution does not stop a Lambda mid-run) must not leave records behind.
 */
import { config } from '#core/config';
import { InvocationEndedError } from '#core/errors';
import { sha256 } from '#core/ids';
import { spansExpireAt } from '#core/retention';
import { cancellationReasons, transactWrite } from './dynamo';
import { auditItem, type Invocation } from './invocations';
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

/** Stores a payload and returns what describes it on the span item. */
async function storePayload(organizationId: string, invocationKey: string, spanId: string, part: 'input' | 'output', value: unknown) {
  const body = JSON.stringify(value ?? null);
  await putJson(payloadKey(organizationId, invocationKey, spanId, part), body);
  return { [`${part}_bytes`]: Buffer.byteLength(body, 'utf8'), [`${part}_sha256`]: sha256(body) };
}

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

/** A recorder of one invocation's spans; every value it receives is already redacted. */
export function spanStore(organizationId: string, invocation: Invocation) {
  const key = invocation.invocation_key;
  /** Writes the items in one transaction that holds only while the invocation runs. */
  const whileRunning = async (...items: TransactItem[]) => {
    try {
      await transactWrite({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: config.tableName,
              Key: keys.invocation(organizationId, key),
              ConditionExpression: '#status = :running',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':running': 'RUNNING' },
            },
          },
          ...items,
        ],
      });
    } catch (error) {
      // The invocation has ended, or the item a span end updates is gone with it.
      if (cancellationReasons(error)?.some((reason) => reason.code === 'ConditionalCheckFailed')) {
        throw new InvocationEndedError(`invocation ${key} is no longer running`);
      }
      throw error;
    }
  };
  const expiresAt = spansExpireAt(invocation.started_at);
  // What the audit event of a span's end names, kept from its start: a step starts and
  // ends its spans in the same slice, so ending one needs no read.
  const started = new Map<string, Pick<SpanStartRecord, 'type' | 'name'>>();
  return {
    async start(span: SpanStartRecord): Promise<void> {
      const { attempt, seq } = position(span.id);
      const described = await storePayload(organizationId, key, span.id, 'input', span.input);
      started.set(span.id, { type: span.type, name: span.name });
      await whileRunning({
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
            started_at: new Date().toISOString(),
            usage: null,
            ...described,
            expires_at: expiresAt,
          },
        },
      });
    },

    async end(spanId: string, outcome: SpanEndRecord): Promise<void> {
      const { attempt, seq } = position(spanId);
      const described = await storePayload(organizationId, key, spanId, 'output', outcome.output);
      const endedAt = new Date().toISOString();
      const span = started.get(spanId);
      if (!span) throw new Error(`span ${spanId} was not started by this recorder`);
      started.delete(spanId);
      const event = span.type === 'tool_call'
        ? { type: 'tool_result' as const, payload: { span_id: spanId, tool: span.name, status: outcome.status } }
        : { type: 'llm_call' as const, payload: { span_id: spanId, model: span.name, status: outcome.status, usage: outcome.usage } };
      await whileRunning(
        {
          Update: {
            TableName: config.tableName,
            Key: keys.span(organizationId, key, attempt, seq),
            UpdateExpression: 'SET #status = :status, ended_at = :ended, #usage = :usage, output_bytes = :bytes, output_sha256 = :sha',
            // Never recreate a span its invocation's deletion removed.
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#status': 'status', '#usage': 'usage' },
            ExpressionAttributeValues: {
              ':status': outcome.status,
              ':ended': endedAt,
              ':usage': outcome.usage,
              ':bytes': described.output_bytes,
              ':sha': described.output_sha256,
            },
          },
        },
        { Put: { TableName: config.tableName, Item: auditItem(organizationId, invocation, event, endedAt) } },
      );
    },
  };
}

/**
 * Spans as they happen: metadata in the table (readable within seconds, expiring with
 * the retention window), payloads in the bucket with their size and digest, and the
 * `llm_call`/`tool_result` audit events when a span ends. Every item is written only while
 * the invocation is RUNNING: a harness still at work after its session was deleted (on AWS
 * a stopped execution does not stop a Lambda mid-run) must not leave records behind.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#core/config';
import { InvocationEndedError } from '#core/errors';
import { sha256 } from '#core/ids';
import { spansExpireAt } from '#core/retention';
import { cancellationReasons, dynamo, transactWrite } from './dynamo';
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
      if (cancellationReasons(error)?.[0]?.code === 'ConditionalCheckFailed') {
        throw new InvocationEndedError(`invocation ${key} is no longer running`);
      }
      throw error;
    }
  };
  const expiresAt = spansExpireAt(invocation.started_at);
  return {
    async start(span: SpanStartRecord): Promise<void> {
      const { attempt, seq } = position(span.id);
      const described = await storePayload(organizationId, key, span.id, 'input', span.input);
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
      const { Item: span } = await dynamo.send(
        new GetCommand({ TableName: config.tableName, Key: keys.span(organizationId, key, attempt, seq), ConsistentRead: true }),
      );
      if (!span) throw new InvocationEndedError(`span ${spanId} is gone: its invocation ended`);
      const event = span.span_type === 'tool_call'
        ? { type: 'tool_result' as const, payload: { span_id: spanId, tool: span.name, status: outcome.status } }
        : { type: 'llm_call' as const, payload: { span_id: spanId, model: span.name, status: outcome.status, usage: outcome.usage } };
      await whileRunning(
        {
          Update: {
            TableName: config.tableName,
            Key: keys.span(organizationId, key, attempt, seq),
            UpdateExpression: 'SET #status = :status, ended_at = :ended, #usage = :usage, output_bytes = :bytes, output_sha256 = :sha',
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

/**
 * Sessions and their invocations. An invocation is accepted and finished by one
 * transaction each, so the idempotency record, the session lock, the quota, the messages
 * and the audit log never disagree.
 */
import { BatchGetCommand, BatchWriteCommand, DeleteCommand, GetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import { newId } from '#kit/ids';
import type { AuditEventType, Failure, Invocation, InvocationStatus, Outcome, Refusal, Session } from '#core/model';
import type { SessionsPosition } from '#core/sessions';
import { cancellationReasons, dynamo, partitionKeyPages, queryPage, queryPrefix, transactWrite, whileRunning } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';

export const failureSchema = z.object({
  kind: z.enum(['crash', 'no_progress', 'interrupted', 'internal']),
  message: z.string(),
}) satisfies z.ZodType<Failure>;

const sessionSchema = z.object({
  id: z.string(),
  state: z.enum(['IDLE', 'RUNNING']),
  invocation_count: z.number(),
  message_count: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  current_invocation_key: z.string().optional(),
  agent_name: z.string().optional(),
  agent_revision: z.string().optional(),
}) satisfies z.ZodType<Session>;

export const sessionEntity = entity('Session', sessionSchema);

/** A session as the sessions index lists it: with the sort key the next page starts after. */
const listedSessionEntity = entity('Session', sessionSchema.extend({ gsi1sk: z.string() }));

/** An invocation item's attributes (the trace indexes read the same items). */
export const invocationSchema = z.object({
  invocation_key: z.string(),
  session_id: z.string(),
  session_position: z.number(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']),
  agent_name: z.string(),
  agent_revision: z.string(),
  body_sha256: z.string(),
  started_at: z.string(),
  ended_at: z.string().optional(),
  failure: failureSchema.optional(),
  user_cursor: z.number(),
  answer_cursor: z.number().optional(),
  cancelled: z.literal(true).optional(),
  model: z.object({ provider: z.string(), name: z.string() }).optional(),
  usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }).optional(),
}) satisfies z.ZodType<Invocation>;

export const invocationEntity = entity('Invocation', invocationSchema);

/** What names an invocation of a session, by its position there. */
const invocationRefEntity = entity('InvocationRef', z.object({ invocation_key: z.string() }));

export interface AuditEventInput {
  type: AuditEventType;
  payload: Record<string, unknown>;
}

/** An audit item for the session partition (the log is append-only: items are only put). */
export function auditItem(organizationId: string, invocation: Pick<Invocation, 'session_id' | 'invocation_key' | 'agent_revision'>, event: AuditEventInput, eventTime: string) {
  const id = newId('evt');
  return {
    ...keys.auditEvent(organizationId, invocation.session_id, eventTime, id),
    type: 'AuditEvent',
    id,
    session_id: invocation.session_id,
    invocation_key: invocation.invocation_key,
    event_type: event.type,
    payload: event.payload,
    event_time: eventTime,
    agent_revision: invocation.agent_revision,
  };
}

/** The gsi1 attributes of a session updated at `updatedAt`, as expression values. */
function listing(organizationId: string, updatedAt: string, sessionId: string) {
  const { gsi1pk, gsi1sk } = keys.sessionListing(organizationId, updatedAt, sessionId);
  return { ':listing': gsi1pk, ':listed': gsi1sk };
}

/** A message item of the invocation's session. */
function messageItem(
  organizationId: string,
  invocation: Pick<Invocation, 'session_id' | 'invocation_key'>,
  message: { cursor: number; role: 'user' | 'assistant'; content: string; created_at: string },
) {
  return {
    ...keys.message(organizationId, invocation.session_id, message.cursor),
    type: 'Message',
    invocation_key: invocation.invocation_key,
    ...message,
  };
}

/** The condition that an invocation is still RUNNING: the guard of every write of a run. */
export function runningInvocation(organizationId: string, invocationKey: string) {
  return whileRunning({ TableName: config.tableName, Key: keys.invocation(organizationId, invocationKey) });
}

/** A session, read consistently (its lock decides whether a run may start). */
export async function getSession(organizationId: string, sessionId: string): Promise<Session | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.session(organizationId, sessionId), ConsistentRead: true }),
  );
  return sessionEntity.parseOptional(Item);
}

/** An invocation by key, read consistently. */
export async function getInvocation(organizationId: string, invocationKey: string): Promise<Invocation | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.invocation(organizationId, invocationKey), ConsistentRead: true }),
  );
  return invocationEntity.parseOptional(Item);
}

/** An invocation by key and a session, read consistently in one request. */
export async function getInvocationAndSession(
  organizationId: string,
  invocationKey: string,
  sessionId: string,
): Promise<{ invocation?: Invocation; session?: Session }> {
  const wanted = [keys.invocation(organizationId, invocationKey), keys.session(organizationId, sessionId)];
  const found: Record<string, unknown>[] = [];
  let request: { Keys: Record<string, unknown>[]; ConsistentRead: boolean } | undefined = { Keys: wanted, ConsistentRead: true };
  for (let round = 0; request; round++) {
    // DynamoDB may leave keys unprocessed under load; they are asked for again.
    if (round) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** Math.min(round, 6)));
    const answer: BatchGetCommandOutput = await dynamo.send(new BatchGetCommand({ RequestItems: { [config.tableName]: request } }));
    found.push(...(answer.Responses?.[config.tableName] ?? []));
    const left = answer.UnprocessedKeys?.[config.tableName]?.Keys;
    request = left?.length ? { Keys: left, ConsistentRead: true } : undefined;
  }
  const itemAt = (key: { pk: string; sk: string }) => found.find((item) => item.pk === key.pk && item.sk === key.sk);
  return { invocation: invocationEntity.parseOptional(itemAt(wanted[0]!)), session: sessionEntity.parseOptional(itemAt(wanted[1]!)) };
}

export interface AcceptInput {
  organizationId: string;
  invocation: Invocation;
  userPrompt: string;
  quota: number;
  /** The session as read just before: the transaction holds only if it is unchanged. */
  seen: Session | undefined;
}

/**
 * Accepts an invocation in one transaction: its idempotency record, the session lock,
 * the organization's quota, the user message and the `agent_invocation` audit event.
 * Returns the refusal when a condition failed instead.
 */
export async function acceptInvocation(input: AcceptInput): Promise<Refusal | undefined> {
  const { organizationId, invocation, seen } = input;
  const now = invocation.started_at;
  const cursor = invocation.user_cursor;
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: config.tableName,
            Item: {
              ...keys.invocation(organizationId, invocation.invocation_key),
              type: 'Invocation',
              ...invocation,
              ...keys.traceListing(organizationId, invocation),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          Update: {
            TableName: config.tableName,
            Key: keys.session(organizationId, invocation.session_id),
            UpdateExpression:
              'SET #type = :type, id = :id, #state = :running, current_invocation_key = :key, invocation_count = :position, ' +
              'message_count = :cursor, updated_at = :now, created_at = if_not_exists(created_at, :now), ' +
              'agent_name = :name, agent_revision = :revision, gsi1pk = :listing, gsi1sk = :listed',
            ConditionExpression: seen
              ? '#state = :idle AND invocation_count = :seenCount AND message_count = :seenMessages'
              : 'attribute_not_exists(pk)',
            ExpressionAttributeNames: { '#type': 'type', '#state': 'state' },
            ExpressionAttributeValues: {
              ':type': 'Session',
              ':id': invocation.session_id,
              ':running': 'RUNNING',
              ':key': invocation.invocation_key,
              ':position': invocation.session_position,
              ':cursor': cursor,
              ':now': now,
              ':name': invocation.agent_name,
              ':revision': invocation.agent_revision,
              ...listing(organizationId, now, invocation.session_id),
              ...(seen ? { ':idle': 'IDLE', ':seenCount': seen.invocation_count, ':seenMessages': seen.message_count } : {}),
            },
          },
        },
        {
          Update: {
            TableName: config.tableName,
            Key: keys.organization(organizationId),
            UpdateExpression: 'ADD invocation_count :one',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(invocation_count) OR invocation_count < :quota)',
            ExpressionAttributeValues: { ':one': 1, ':quota': input.quota },
          },
        },
        {
          Put: {
            TableName: config.tableName,
            Item: messageItem(organizationId, invocation, { cursor, role: 'user', content: input.userPrompt, created_at: now }),
          },
        },
        {
          Put: {
            TableName: config.tableName,
            Item: {
              ...keys.invocationRef(organizationId, invocation.session_id, invocation.session_position),
              type: 'InvocationRef',
              invocation_key: invocation.invocation_key,
            },
          },
        },
        {
          Put: {
            TableName: config.tableName,
            Item: auditItem(organizationId, invocation, {
              type: 'agent_invocation',
              payload: { agent_name: invocation.agent_name, session_position: invocation.session_position },
            }, now),
          },
        },
      ],
    });
    return undefined;
  } catch (error) {
    const reasons = cancellationReasons(error);
    if (!reasons) throw error;
    const [record, session, organization] = reasons;
    if (record?.code === 'ConditionalCheckFailed' && record.item) return { reason: 'key_in_use', invocation: invocationEntity.parse(record.item) };
    if (session?.code === 'ConditionalCheckFailed') return { reason: 'session_changed' };
    if (organization?.code === 'ConditionalCheckFailed') return { reason: 'quota_exhausted' };
    throw error;
  }
}

/** An outcome of one organization's invocation. */
export interface OutcomeInput extends Outcome {
  organizationId: string;
}

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

/**
 * The writes that record how an invocation ended: its status (the first item, holding
 * only while it is RUNNING), the session's release, the assistant message (on success)
 * and the `run_succeeded`/`run_failed` audit event. One transaction, alone or with more.
 */
export function outcomeItems(input: OutcomeInput): TransactItem[] {
  const { organizationId, invocation, endedAt, answer, failure, messageCount } = input;
  const succeeded = answer !== undefined;
  const status: InvocationStatus = succeeded ? 'SUCCEEDED' : 'FAILED';
  const cursor = messageCount + 1;
  return [
    {
      Update: whileRunning({
        TableName: config.tableName,
        Key: keys.invocation(organizationId, invocation.invocation_key),
        // tr_status moves the invocation to its outcome's partition of the status index.
        UpdateExpression: succeeded
          ? 'SET #status = :status, tr_status = :listed, ended_at = :now, #usage = :usage, answer_cursor = :cursor'
          : `SET #status = :status, tr_status = :listed, ended_at = :now, #usage = :usage, failure = :failure${input.cancelled ? ', cancelled = :cancelled' : ''}`,
        ExpressionAttributeNames: { '#usage': 'usage' },
        ExpressionAttributeValues: {
          ':usage': input.usage,
          ':status': status,
          ':listed': keys.traceListing(organizationId, { ...invocation, status }).tr_status,
          ':now': endedAt,
          ...(succeeded ? { ':cursor': cursor } : { ':failure': failure }),
          ...(input.cancelled ? { ':cancelled': true } : {}),
        },
      }),
    },
    {
      Update: {
        TableName: config.tableName,
        Key: keys.session(organizationId, invocation.session_id),
        UpdateExpression: `SET #state = :idle, updated_at = :now, gsi1sk = :listed${succeeded ? ', message_count = :cursor' : ''} REMOVE current_invocation_key`,
        ConditionExpression: 'current_invocation_key = :key AND message_count = :seenMessages',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':idle': 'IDLE',
          ':now': endedAt,
          ':key': invocation.invocation_key,
          ':seenMessages': messageCount,
          ':listed': listing(organizationId, endedAt, invocation.session_id)[':listed'],
          ...(succeeded ? { ':cursor': cursor } : {}),
        },
      },
    },
    ...(succeeded
      ? [{ Put: { TableName: config.tableName, Item: messageItem(organizationId, invocation, { cursor, role: 'assistant', content: answer!, created_at: endedAt }) } }]
      : []),
    {
      Put: {
        TableName: config.tableName,
        Item: auditItem(organizationId, invocation, {
          type: succeeded ? 'run_succeeded' : 'run_failed',
          payload: succeeded ? { usage: input.usage } : { failure, usage: input.usage, ...(input.cancelled ? { cancelled: true } : {}) },
        }, endedAt),
      },
    },
  ];
}

/**
 * Records how an invocation ended, in one transaction (see `outcomeItems`).
 * False when the outcome was already recorded (the task ran twice).
 */
export async function recordOutcome(input: OutcomeInput): Promise<boolean> {
  try {
    await transactWrite({ TransactItems: outcomeItems(input) });
    return true;
  } catch (error) {
    if (cancellationReasons(error)?.[0]?.code === 'ConditionalCheckFailed') return false;
    throw error;
  }
}

/** Up to `limit` sessions of an organization, newest `updated_at` first, and where the next page starts. */
export async function listSessions(
  organizationId: string,
  limit: number,
  after: SessionsPosition | undefined,
): Promise<{ sessions: Session[]; next?: SessionsPosition }> {
  const { index, gsi1pk } = keys.sessionsOf(organizationId);
  const { items, more } = await queryPage(
    {
      IndexName: index,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': gsi1pk },
      ScanIndexForward: false,
    },
    limit,
    after ? { ...keys.session(organizationId, after.id), gsi1pk, gsi1sk: after.listed } : undefined,
  );
  const listed = items.map(listedSessionEntity.parse);
  const last = listed.at(-1);
  return {
    sessions: listed.map(({ gsi1sk: _listed, ...session }) => session),
    ...(more && last ? { next: { listed: last.gsi1sk, id: last.id } } : {}),
  };
}

/** Keys of every invocation a session has accepted, oldest first (from its references). */
export async function listSessionInvocationKeys(organizationId: string, sessionId: string): Promise<string[]> {
  const refs = await queryPrefix(keys.invocationRefsOf(organizationId, sessionId), { consistent: true });
  return refs.map((ref) => invocationRefEntity.parse(ref).invocation_key);
}

// BatchWriteItem takes at most 25 requests.
const BATCH_SIZE = 25;

/** Deletes every item of a partition; DynamoDB may leave some of a batch unprocessed, which are sent again. */
export async function deletePartition(pk: string): Promise<void> {
  for await (const items of partitionKeyPages(pk)) {
    for (let i = 0; i < items.length; i += BATCH_SIZE) {
      let requests = items.slice(i, i + BATCH_SIZE).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests.length; attempt++) {
        if (attempt) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** Math.min(attempt, 6)));
        const { UnprocessedItems } = await dynamo.send(new BatchWriteCommand({ RequestItems: { [config.tableName]: requests } }));
        requests = (UnprocessedItems?.[config.tableName] ?? []) as typeof requests;
      }
    }
  }
}

/** Deletes an invocation's record, attempts and spans. */
export async function deleteInvocationRecords(organizationId: string, invocationKey: string): Promise<void> {
  await deletePartition(keys.invocationContents(organizationId, invocationKey).pk);
  await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key: keys.invocation(organizationId, invocationKey) }));
}

/** Deletes a session's messages, audit events and invocation references, then the session itself. */
export async function deleteSessionRecords(organizationId: string, sessionId: string): Promise<void> {
  await deletePartition(keys.sessionContents(organizationId, sessionId).pk);
  await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key: keys.session(organizationId, sessionId) }));
}

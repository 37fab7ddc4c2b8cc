/**
 * Memories of a group, one partition per organization and group. Ids are time-ordered,
 * so a reverse query lists them newest first and a delete by id is a direct key. A
 * memory is written by its invocation in one transaction with its `memory_written` audit
 * event (and, for a replacement, the old memory's status), and only while that
 * invocation is RUNNING: a harness still at work after its session was deleted leaves
 * nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import { eventTime } from '#kit/ids';
import type { DistillationStore } from '#core/distill-memories';
import { InvocationEndedError } from '#core/errors';
import type { MemoryStore } from '#core/memories';
import type { InvocationFacts, Memory } from '#core/model';
import type { MemoryGroupStore } from '#functions/agent/tools/types';
import { cursorKey } from './cursor-key';
import { cancellationReasons, dynamo, isConditionFailure, queryPage, queryPrefixNewestFirst, transactWrite } from './dynamo';
import { entity } from './entity';
import { auditItem, deletePartition, runningInvocation } from './invocations';
import { keys } from './keys';

const memoryEntity = entity('Memory', z.object({
  id: z.string(),
  content: z.string(),
  status: z.enum(['active', 'replaced']),
  created_at: z.string(),
  source_session: z.string(),
  source_invocation: z.string(),
}) satisfies z.ZodType<Memory>);

/** One memory to write; `replaces` names an active memory of the same group it supersedes. */
export interface MemoryWrite {
  content: string;
  replaces?: string;
}

export interface WriteInput {
  organizationId: string;
  group: string;
  /** The running invocation that writes (its session and key become the memories' sources). */
  invocation: InvocationFacts;
  /** How the memories came about, recorded on their audit events. */
  generation: 'agent' | 'session';
  writes: MemoryWrite[];
  /** Also mark the invocation as distilled, and write nothing when it already is. */
  distillation?: boolean;
}

/** Why nothing was written: the replaced memory is not in the group, or no longer active; or the invocation was distilled before. */
export type WriteRefusal = { reason: 'replaced_missing' | 'replaced_inactive'; id: string } | { reason: 'already_distilled' };

// Lower-case base32 in ASCII order, so the text of ids sorts as their times do.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
let lastMillis = 0;

function base32(value: number, width: number): string {
  let text = '';
  for (let rest = value; text.length < width; rest = Math.floor(rest / 32)) text = ALPHABET[rest % 32] + text;
  return text;
}

/**
 * A new memory id: `mem_`, the creation time in ms (10 base32 characters, strictly
 * increasing within a process, so memories written together keep their order), then 12
 * random characters. 26 characters in all.
 */
function newMemoryId(): string {
  lastMillis = Math.max(Date.now(), lastMillis + 1);
  const random = [...randomBytes(12)].map((byte) => ALPHABET[byte & 31]).join('');
  return `mem_${base32(lastMillis, 10)}${random}`;
}

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

/**
 * Writes memories, each with its `memory_written` audit event, in one transaction that
 * holds only while the invocation runs (InvocationEndedError otherwise). A replacement
 * turns the memory it replaces `replaced` in the same transaction, conditioned on it
 * being active in this group. Returns the memories written, or why none was.
 * At most 24 memories per call (a transaction takes 100 actions).
 */
export async function writeMemories(input: WriteInput): Promise<{ memories: Memory[] } | WriteRefusal> {
  const { organizationId, group, invocation } = input;
  const createdAt = eventTime();
  const memories: Memory[] = input.writes.map((write) => ({
    id: newMemoryId(),
    content: write.content,
    status: 'active',
    created_at: createdAt,
    source_session: invocation.session_id,
    source_invocation: invocation.invocation_key,
  }));
  // What each action of the transaction checks, to tell why it was cancelled.
  const checks: ({ reason: 'ended' } | { reason: 'already_distilled' } | { reason: 'replaced'; id: string } | undefined)[] = [];
  const items: TransactItem[] = [];
  const add = (item: TransactItem, check?: (typeof checks)[number]) => {
    items.push(item);
    checks.push(check);
  };
  add(
    { ConditionCheck: runningInvocation(organizationId, invocation.invocation_key) },
    { reason: 'ended' },
  );
  if (input.distillation) {
    add(
      {
        Put: {
          TableName: config.tableName,
          Item: { ...keys.memoryDistillation(organizationId, invocation.invocation_key), type: 'MemoryDistillation', group, distilled_at: createdAt },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      { reason: 'already_distilled' },
    );
  }
  input.writes.forEach((write, i) => {
    const memory = memories[i]!;
    add({
      Put: {
        TableName: config.tableName,
        Item: { ...keys.memory(organizationId, group, memory.id), type: 'Memory', ...memory },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    if (write.replaces !== undefined) {
      add(
        {
          Update: {
            TableName: config.tableName,
            Key: keys.memory(organizationId, group, write.replaces),
            UpdateExpression: 'SET #status = :replaced, replaced_by = :by',
            ConditionExpression: 'attribute_exists(pk) AND #status = :active',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':replaced': 'replaced', ':active': 'active', ':by': memory.id },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { reason: 'replaced', id: write.replaces },
      );
    }
    const payload = { memory_id: memory.id, group, generation: input.generation, ...(write.replaces !== undefined ? { replaces: write.replaces } : {}) };
    add({ Put: { TableName: config.tableName, Item: auditItem(organizationId, invocation, { type: 'memory_written', payload }, createdAt) } });
  });

  try {
    await transactWrite({ TransactItems: items });
    return { memories };
  } catch (error) {
    const reasons = cancellationReasons(error);
    const failed = reasons?.findIndex((reason) => reason.code === 'ConditionalCheckFailed') ?? -1;
    const check = checks[failed];
    if (!reasons || !check) throw error;
    if (check.reason === 'ended') throw new InvocationEndedError(`invocation ${invocation.invocation_key} is no longer running`);
    if (check.reason === 'already_distilled') return { reason: 'already_distilled' };
    return { reason: reasons[failed]!.item ? 'replaced_inactive' : 'replaced_missing', id: check.id };
  }
}

/** Whether an invocation's memories were already distilled. */
export async function isDistilled(organizationId: string, invocationKey: string): Promise<boolean> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.memoryDistillation(organizationId, invocationKey), ConsistentRead: true }),
  );
  return Item !== undefined;
}

/** Up to `limit` memories of a group after the one with id `afterId`, newest first, active and replaced, and whether more follow. */
export async function listMemories(
  organizationId: string,
  group: string,
  afterId: string | undefined,
  limit: number,
): Promise<{ memories: Memory[]; more: boolean }> {
  const after = afterId !== undefined ? keys.memory(organizationId, group, afterId).sk : undefined;
  const { items, more } = await queryPrefixNewestFirst(keys.memoriesOf(organizationId, group), after, limit);
  return { memories: items.map(memoryEntity.parse), more };
}

/** The newest `limit` active memories of a group, newest first. */
export async function activeMemories(organizationId: string, group: string, limit: number): Promise<Memory[]> {
  const { pk, skPrefix } = keys.memoriesOf(organizationId, group);
  const { items } = await queryPage(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ':active': 'active' },
      ScanIndexForward: false,
      ConsistentRead: true,
    },
    limit,
  );
  return items.map(memoryEntity.parse);
}

/** Deletes one memory of a group; false when the group holds no memory with that id. */
export async function deleteMemory(organizationId: string, group: string, memoryId: string): Promise<boolean> {
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: keys.memory(organizationId, group, memoryId),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Deletes every memory of a group, page by page; an empty group is deleted just the same. */
export async function deleteMemoryGroup(organizationId: string, group: string): Promise<void> {
  await deletePartition(keys.memoriesOf(organizationId, group).pk);
}

/** The memory groups of `organizationId` (`core/memories.ts` declares the store). */
export function memoryStore(organizationId: string): MemoryStore {
  return {
    organizationId,
    cursorKey,
    list: (group, afterId, limit) => listMemories(organizationId, group, afterId, limit),
    delete: (group, memoryId) => deleteMemory(organizationId, group, memoryId),
    deleteGroup: (group) => deleteMemoryGroup(organizationId, group),
  };
}

/**
 * One group as a running invocation sees it: the memory tool's store and the session
 * distillation's, bound to the organization and to the invocation that writes.
 */
export function memoryGroupStore(organizationId: string, group: string, invocation: InvocationFacts): MemoryGroupStore & DistillationStore {
  return {
    active: (limit) => activeMemories(organizationId, group, limit),
    distilled: () => isDistilled(organizationId, invocation.invocation_key),
    async writeDistilled(contents) {
      const result = await writeMemories({ organizationId, group, invocation, generation: 'session', writes: contents.map((content) => ({ content })), distillation: true });
      return 'memories' in result ? { written: result.memories.length } : 'distilled_before';
    },
    async write(content, replaces) {
      const result = await writeMemories({
        organizationId,
        group,
        invocation,
        generation: 'agent',
        writes: [{ content, ...(replaces !== undefined ? { replaces } : {}) }],
      });
      if ('memories' in result) return { id: result.memories[0]!.id };
      if (result.reason === 'replaced_inactive') return { refused: 'replaced_inactive', id: result.id };
      return { refused: 'unknown', id: replaces ?? '' };
    },
  };
}

import 'aws-sdk-client-mock-vitest/extend';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { deleteToken, putToken, touchKey } from '#data/tokens';

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('API key adapter', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  const token = { id: 'tok_1', name: 'ci', created_at: '2026-01-01T00:00:00.000Z', key_prefix: 'ask_abcdefgh' };

  beforeEach(() => {
    dynamo.reset();
    vi.stubEnv('TABLE_NAME', 'table');
  });

  it('writes the record and the hash lookup in one transaction, never the key', async () => {
    dynamo.on(TransactWriteCommand).resolves({});

    await putToken('org_a', token, 'hash1');

    const input = dynamo.commandCalls(TransactWriteCommand)[0]!.args[0].input;
    expect(input.TransactItems).toHaveLength(2);
    expect(input.TransactItems![0]!.Put!.Item).toMatchObject({ pk: 'ORG#org_a', sk: 'TOKEN#tok_1', key_hash: 'hash1' });
    expect(input.TransactItems![1]!.Put!.Item).toMatchObject({ pk: 'APIKEY#hash1', organization_id: 'org_a', token_id: 'tok_1' });
    expect(JSON.stringify(input)).not.toMatch(/"key":/);
  });

  it('retries a transaction cancelled only by a concurrent one', async () => {
    dynamo.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});

    await putToken('org_a', token, 'hash1');

    expect(dynamo).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
  });

  it('revokes both items of a key', async () => {
    dynamo.on(GetCommand).resolves({ Item: { ...token, organization_id: 'org_a', key_hash: 'hash1' } });
    dynamo.on(TransactWriteCommand).resolves({});

    await expect(deleteToken('org_a', 'tok_1')).resolves.toBe(true);

    const items = dynamo.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items.map((item) => item.Delete!.Key)).toEqual([
      { pk: 'ORG#org_a', sk: 'TOKEN#tok_1' },
      { pk: 'APIKEY#hash1', sk: 'APIKEY' },
    ]);
  });

  it('deletes nothing for a key of no record, and says so (core decides what that means)', async () => {
    dynamo.on(GetCommand).resolves({});

    await expect(deleteToken('org_a', 'tok_x')).resolves.toBe(false);
    expect(dynamo).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('does not resurrect a key revoked while it was being stamped', async () => {
    dynamo.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));

    await expect(
      touchKey('hash1', { organization_id: 'org_a', token_id: 'tok_1', name: 'ci' }, '2026-01-01T00:00:00.000Z'),
    ).resolves.toBeUndefined();
    const items = dynamo.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items.every((item) => item.Update!.ConditionExpression === 'attribute_exists(pk)')).toBe(true);
  });
});

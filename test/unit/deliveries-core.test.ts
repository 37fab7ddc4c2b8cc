/**
 * Announcing outcomes (`core/deliveries.ts` through `core/attempts.ts`) against an
 * in-memory store: whoever records an outcome starts one delivery per subscribed target,
 * named by the outcome and the target, so announcing again (a rescue path finding the
 * outcome recorded) starts nothing twice. No network.
 */
import { describe, expect, it } from 'vitest';
import { cancelInvocation, finishInvocation, interruptInvocation } from '#core/attempts';
import type { Webhook } from '#core/webhooks';
import { memoryAttemptStore } from '../fakes/memory-attempt-store';

const webhook = (id: string, events: Webhook['events'] = ['invocation.succeeded', 'invocation.failed']): Webhook => ({
  id,
  url: `https://hooks.example.com/${id}`,
  events,
  created_at: '2026-01-01T00:00:00.000Z',
});

/** The store with attempt 1 of `key-1` ended as given. */
async function endedAttempt(outcome: { status: 'SUCCEEDED'; answer: string } | { status: 'FAILED'; failure: { kind: 'crash'; message: string } }) {
  const store = memoryAttemptStore();
  const invocation = (await store.invocation('key-1'))!;
  await store.openAttempt(invocation, 1, invocation.started_at);
  await store.endAttempt('key-1', 1, { ...outcome, ended_at: new Date().toISOString() } as never);
  return store;
}

describe('announcing an outcome', () => {
  it('starts one delivery per webhook subscribed to its type, with the summary as the event', async () => {
    const store = await endedAttempt({ status: 'SUCCEEDED', answer: 'done' });
    store.webhooks.push(webhook('wh_a'), webhook('wh_b', ['invocation.failed']), webhook('wh_c', ['invocation.succeeded']));

    await finishInvocation(store, 'key-1');

    expect(store.started.map(({ order }) => order.target)).toEqual([
      { kind: 'webhook', id: 'wh_a' },
      { kind: 'webhook', id: 'wh_c' },
    ]);
    const [first, second] = store.started;
    expect(first!.name).toMatch(/^dlv-[0-9a-f]{64}$/);
    expect(first!.name).not.toBe(second!.name);
    expect(first!.order.event_id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(first!.order.event_id).not.toBe(second!.order.event_id);
    const ended = (await store.invocation('key-1'))!;
    expect(first!.order.event).toEqual({
      type: 'invocation.succeeded',
      timestamp: ended.ended_at,
      data: expect.objectContaining({ invocation_key: 'key-1', session_id: 'session-1', status: 'SUCCEEDED', ended_at: ended.ended_at }),
    });
    expect(first!.order.event.data).not.toHaveProperty('failure');
  });

  it('announces again, without a second delivery, when a rescue path finds the outcome recorded', async () => {
    const store = await endedAttempt({ status: 'FAILED', failure: { kind: 'crash', message: 'the harness process exited unexpectedly' } });
    store.webhooks.push(webhook('wh_a'));

    await finishInvocation(store, 'key-1');
    const first = structuredClone(store.started);
    await finishInvocation(store, 'key-1');
    await interruptInvocation(store, 'key-1', 'the execution was stopped');

    expect(store.started).toEqual(first);
    expect(first).toHaveLength(1);
    expect(first[0]!.order.event).toMatchObject({ type: 'invocation.failed', data: { status: 'FAILED', failure: { kind: 'crash' } } });
  });

  it('announces a cancel', async () => {
    const store = memoryAttemptStore();
    store.webhooks.push(webhook('wh_a', ['invocation.failed']));

    await cancelInvocation(store, { stop: async () => undefined }, 'key-1');

    expect(store.started).toHaveLength(1);
    expect(store.started[0]!.order.event.data.failure?.message).toMatch(/^cancelled/);
  });

  it('starts nothing for an organization without webhooks or export', async () => {
    const store = await endedAttempt({ status: 'SUCCEEDED', answer: 'done' });

    await finishInvocation(store, 'key-1');

    expect(store.started).toEqual([]);
  });
});

/**
 * The rules of organization secrets (`core/secrets.ts`) against an in-memory store: names
 * taken and missing, a failed value write that must not leave the name taken, and a
 * rotation that races a deletion. No network.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, NotFoundError } from '#core/errors';
import { createSecret, deleteSecret, listSecrets, readSecret, rotateSecret } from '#core/secrets';
import { memorySecretStore } from '../fakes/memory-secret-store';

const longValue = 'sk-0123456789abcdef';

describe('organization secrets', () => {
  it('stores the value apart and shows only the masked metadata', async () => {
    const store = memorySecretStore();

    const view = await createSecret(store, 'OPENAI_API_KEY', longValue);

    expect(view).toEqual({ name: 'OPENAI_API_KEY', masked_value: '****cdef' });
    expect(store.values.get('OPENAI_API_KEY')).toBe(longValue);
    expect(await readSecret(store, 'OPENAI_API_KEY')).toEqual(view);
    expect(await listSecrets(store)).toEqual([view]);
  });

  it('refuses a taken name with a hint to rotate, keeping the first value', async () => {
    const store = memorySecretStore();
    await createSecret(store, 'TOKEN', 'first');

    const error = await createSecret(store, 'TOKEN', 'second').catch((e) => e);

    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toBe('secret TOKEN already exists; rotate it with PUT /secrets/TOKEN');
    expect(store.values.get('TOKEN')).toBe('first');
  });

  it('frees the name again when the value cannot be stored', async () => {
    const store = memorySecretStore();
    store.beforeWriteValue = () => {
      throw new Error('secrets store unreachable');
    };

    await expect(createSecret(store, 'TOKEN', 'value')).rejects.toThrow('secrets store unreachable');

    expect(store.metadata.has('TOKEN')).toBe(false);
  });

  it('rotates the value and the mask, keeping when the secret was created', async () => {
    const store = memorySecretStore();
    await createSecret(store, 'TOKEN', 'short');
    const createdAt = store.metadata.get('TOKEN')!.created_at;

    const view = await rotateSecret(store, 'TOKEN', longValue);

    expect(view).toEqual({ name: 'TOKEN', masked_value: '****cdef' });
    expect(store.values.get('TOKEN')).toBe(longValue);
    expect(store.metadata.get('TOKEN')!.created_at).toBe(createdAt);
  });

  it('drops the value a rotation wrote when the secret was deleted meanwhile', async () => {
    const store = memorySecretStore();
    await createSecret(store, 'TOKEN', 'first');
    store.beforeWriteValue = () => store.metadata.delete('TOKEN');

    const error = await rotateSecret(store, 'TOKEN', 'second').catch((e) => e);

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('secret TOKEN not found');
    expect(store.values.has('TOKEN')).toBe(false);
  });

  it('deletes the metadata and the value', async () => {
    const store = memorySecretStore();
    await createSecret(store, 'TOKEN', 'value');

    await deleteSecret(store, 'TOKEN');

    expect(store.metadata.size).toBe(0);
    expect(store.values.size).toBe(0);
  });

  it.each([
    ['read', (store: ReturnType<typeof memorySecretStore>) => readSecret(store, 'MISSING')],
    ['rotated', (store: ReturnType<typeof memorySecretStore>) => rotateSecret(store, 'MISSING', 'value')],
    ['deleted', (store: ReturnType<typeof memorySecretStore>) => deleteSecret(store, 'MISSING')],
  ])('answers 404 for a missing secret %s', async (_case, act) => {
    const store = memorySecretStore();

    const error = await act(store).catch((e) => e);

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('secret MISSING not found');
    expect(store.values.size).toBe(0);
  });
});

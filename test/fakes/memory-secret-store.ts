/**
 * An in-memory `SecretStore` of one organization for the fast tests of `core/secrets.ts`:
 * metadata and values in two maps, as the table and Secrets Manager keep them apart, and
 * a hook to fail a value write or change the world in the middle of a rotation.
 */
import type { SecretMetadata, SecretStore } from '#core/secrets';

export interface MemorySecretStore extends SecretStore {
  metadata: Map<string, SecretMetadata>;
  values: Map<string, string>;
  /** Called at the start of `writeValue`: a test's way to fail it or to act between read and write. */
  beforeWriteValue?: (name: string) => void;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function memorySecretStore(): MemorySecretStore {
  const store: MemorySecretStore = {
    metadata: new Map(),
    values: new Map(),
    async insert(metadata) {
      await turn();
      if (store.metadata.has(metadata.name)) return false;
      store.metadata.set(metadata.name, { ...metadata });
      return true;
    },
    async replace(metadata) {
      await turn();
      if (!store.metadata.has(metadata.name)) return false;
      store.metadata.set(metadata.name, { ...metadata });
      return true;
    },
    async get(name) {
      await turn();
      const metadata = store.metadata.get(name);
      return metadata && { ...metadata };
    },
    async list() {
      await turn();
      return [...store.metadata.values()].sort((a, b) => a.name.localeCompare(b.name)).map((metadata) => ({ ...metadata }));
    },
    async delete(name) {
      await turn();
      return store.metadata.delete(name);
    },
    async writeValue(name, value) {
      await turn();
      store.beforeWriteValue?.(name);
      store.values.set(name, value);
    },
    async deleteValue(name) {
      await turn();
      store.values.delete(name);
    },
  };
  return store;
}

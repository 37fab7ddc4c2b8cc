import { acceptanceStoreContract } from '../contracts/acceptance-store';
import { memoryAcceptanceStore } from '../fakes/memory-acceptance-store';

acceptanceStoreContract('in memory', async () => {
  const store = memoryAcceptanceStore();
  return { store, addSecret: async (name) => void store.secrets.add(name) };
});

import { attemptStoreContract } from '../contracts/attempt-store';
import { memoryAttemptStore } from '../fakes/memory-attempt-store';

attemptStoreContract('in memory', async () => {
  const store = memoryAttemptStore();
  return { store, invocation: store.invocations.get('key-1')! };
});

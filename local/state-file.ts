/**
 * A JSON file an emulator keeps its state in. Writes are chained so they land in order,
 * each writing the state as it is then, and atomic (temporary file + rename, mode 0600);
 * a failed write fails its own request, not the writes after it.
 */
import { chmod, rename, writeFile } from 'node:fs/promises';

/**
 * `persist()` writes `snapshot()` to `file`, `flush()` settles once every write has landed;
 * without a file (memory mode) neither does anything.
 */
export function stateFile(file: string | null | undefined, snapshot: () => unknown): { persist(): Promise<void>; flush(): Promise<void> } {
  let writes: Promise<void> = Promise.resolve();
  return {
    persist() {
      if (!file) return Promise.resolve();
      const write = writes.then(async () => {
        const temporary = `${file}.${process.pid}.tmp`;
        await writeFile(temporary, JSON.stringify(snapshot()), { mode: 0o600 });
        await chmod(temporary, 0o600);
        await rename(temporary, file);
      });
      writes = write.catch(() => undefined);
      return write;
    },
    flush: () => writes,
  };
}

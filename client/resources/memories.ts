/** Memories of a memory group. */
import { path, type RequestOptions, type Transport } from '../core';
import { PagePromise } from '../pagination';
import type { Memory, MemoryListParams, MemoryListResponse } from '../types';

export class Memories {
  constructor(private readonly transport: Transport) {}

  /** The group's memories newest first, active and replaced; iterate for all of them. */
  list(params: MemoryListParams, options: RequestOptions = {}): PagePromise<MemoryListResponse, Memory> {
    const { after: start, ...query } = params;
    return new PagePromise(
      (after) => this.transport.get<MemoryListResponse>({ path: '/memories', query: { ...query, after } }, options),
      (page) => page.memories,
      start,
    );
  }

  /** Deletes one memory of the group for good. */
  async delete(id: string, params: { group: string }, options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: path`/memories/${id}`, query: { group: params.group } }, options);
  }

  /** Deletes every memory of the group. */
  async deleteAll(params: { group: string }, options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: '/memories', query: { group: params.group } }, options);
  }
}

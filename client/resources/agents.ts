/** Agents: the names runs were sent with, and their revisions. */
import { path, type RequestOptions, type Transport } from '../core';
import type { AgentDetail, AgentListResponse, AgentRevision } from '../types';

export class Agents {
  constructor(private readonly transport: Transport) {}

  /** Every agent of the organization. */
  async list(options: RequestOptions = {}): Promise<AgentListResponse> {
    return this.transport.get<AgentListResponse>({ path: '/agents' }, options);
  }

  /** One agent: its current revision with config, and every revision newest first. */
  async get(name: string, options: RequestOptions = {}): Promise<AgentDetail> {
    return this.transport.get<AgentDetail>({ path: path`/agents/${name}` }, options);
  }

  /** One revision of an agent, with its config. */
  async revision(name: string, revision: string, options: RequestOptions = {}): Promise<AgentRevision> {
    return this.transport.get<AgentRevision>({ path: path`/agents/${name}/revisions/${revision}` }, options);
  }
}

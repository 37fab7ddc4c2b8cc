/** Agents: the names runs were sent with, and their revisions. */
import { path, type RequestOptions, type Transport } from '../core';
import type { AgentDetail, AgentListResponse, AgentRevision } from '../types';

export class Agents {
  constructor(private readonly transport: Transport) {}

  /** Every agent of the organization. */
  async list(options: RequestOptions = {}): Promise<AgentListResponse> {
    return (await this.transport.request<AgentListResponse>({ method: 'GET', path: '/agents', retry: 'idempotent' }, options)).body;
  }

  /** One agent: its current revision with config, and every revision newest first. */
  async get(name: string, options: RequestOptions = {}): Promise<AgentDetail> {
    return (await this.transport.request<AgentDetail>({ method: 'GET', path: path`/agents/${name}`, retry: 'idempotent' }, options)).body;
  }

  /** One revision of an agent, with its config. */
  async revision(name: string, revision: string, options: RequestOptions = {}): Promise<AgentRevision> {
    return (await this.transport.request<AgentRevision>({ method: 'GET', path: path`/agents/${name}/revisions/${revision}`, retry: 'idempotent' }, options)).body;
  }
}

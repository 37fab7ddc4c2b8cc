/** Agents and their revisions: /agents. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { AgentConfig } from './agent';
import { Timestamp } from './common';
import { defineOperation } from './operation';

/** The `agent_name` a run was sent with, as the gateway decoded it from the path. */
export const AgentName = z.string().min(1).max(255);

/** The first 16 hex characters of the SHA-256 of the configuration's canonical JSON. */
export const RevisionId = z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 lowercase hexadecimal characters');

export const AgentNameParams = z.object({ name: AgentName });

export const AgentRevisionParams = z.object({ name: AgentName, revision: RevisionId });

export const AgentSummary = z.object({
  name: z.string(),
  revision_count: z.int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const AgentsResponse = z.object({ agents: z.array(AgentSummary) });

/** One revision: `created_at` is when it first ran. */
export const AgentRevision = z.object({ revision: RevisionId, created_at: Timestamp, config: AgentConfig });

export const AgentDetail = z.object({
  name: z.string(),
  current: AgentRevision,
  /** Newest first. */
  revisions: z.array(AgentRevision.pick({ revision: true, created_at: true })),
});

export const listAgentsOperation = defineOperation({
  route: routeOf('GET /agents'),
  tag: 'Agents',
  summary: "List the organization's agents",
  input: {},
  responses: { 200: { description: 'Every agent name that has run, with its revision count.', body: AgentsResponse } },
  errors: [],
});

export const getAgentOperation = defineOperation({
  route: routeOf('GET /agents/{name}'),
  tag: 'Agents',
  summary: 'Read an agent: its current revision and every revision, newest first',
  input: { params: AgentNameParams },
  responses: { 200: { description: 'The agent.', body: AgentDetail } },
  errors: [404],
});

export const getRevisionOperation = defineOperation({
  route: routeOf('GET /agents/{name}/revisions/{revision}'),
  tag: 'Agents',
  summary: 'Read one revision of an agent with its configuration',
  description: "A revision is the first 16 hex characters of the SHA-256 of the configuration's canonical JSON (keys sorted).",
  input: { params: AgentRevisionParams },
  responses: { 200: { description: 'The revision.', body: AgentRevision } },
  errors: [404],
});

/** Organization API keys: /tokens. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { Timestamp } from './common';
import { defineOperation } from './operation';

export const TokenIdParams = z.object({ id: z.string().min(1).max(64) });

export const CreateTokenBody = z.strictObject({ name: z.string().trim().min(1).max(100) });

export const Token = z.object({
  id: z.string(),
  name: z.string(),
  created_at: Timestamp,
  last_used_at: Timestamp.optional(),
  key_prefix: z.string(),
});

/** Returned once, at creation: the only time the key is shown. */
export const CreatedToken = z.object({ id: z.string(), name: z.string(), created_at: Timestamp, key: z.string() });

export const TokensResponse = z.object({ tokens: z.array(Token) });

export const listTokensOperation = defineOperation({
  route: routeOf('GET /tokens'),
  tag: 'Tokens',
  summary: "List the organization's API keys",
  description: 'Never the keys themselves: `key_prefix` tells them apart.',
  input: {},
  responses: { 200: { description: 'Every API key of the organization.', body: TokensResponse } },
  errors: [],
});

export const createTokenOperation = defineOperation({
  route: routeOf('POST /tokens'),
  tag: 'Tokens',
  summary: 'Mint an organization API key',
  description: 'The response is the only place the key appears; the service keeps only its hash.',
  input: { body: CreateTokenBody },
  responses: { 201: { description: 'Created; `key` is shown this once.', body: CreatedToken } },
  errors: [],
});

export const getTokenOperation = defineOperation({
  route: routeOf('GET /tokens/{id}'),
  tag: 'Tokens',
  summary: "Read an API key's record",
  input: { params: TokenIdParams },
  responses: { 200: { description: 'The API key record (never the key).', body: Token } },
  errors: [404],
});

export const deleteTokenOperation = defineOperation({
  route: routeOf('DELETE /tokens/{id}'),
  tag: 'Tokens',
  summary: 'Revoke an API key',
  description: 'At once: the key gets 401 on its next request.',
  input: { params: TokenIdParams },
  responses: { 204: { description: 'Revoked.' } },
  errors: [404],
});

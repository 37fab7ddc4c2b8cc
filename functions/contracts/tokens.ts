/** Organization API keys: /tokens. */
import { z } from 'zod';
import { Timestamp } from './common';

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

/** GET /whoami, GET /health, GET /models, POST /invites. */
import { z } from 'zod';

export const Role = z.enum(['admin', 'member']);

export const WhoamiResponse = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('user'),
    organization_id: z.string(),
    user: z.object({ id: z.string(), email: z.string(), role: Role }),
  }),
  z.object({
    kind: z.literal('api_key'),
    organization_id: z.string(),
    api_key: z.object({ id: z.string(), name: z.string() }),
  }),
]);

export const HealthResponse = z.object({ status: z.literal('ok') });

export const Model = z.object({ name: z.string(), provider: z.string() });
export const ModelsResponse = z.object({ models: z.array(Model) });

export const CreateInviteBody = z.strictObject({
  // HTML5's rule, as the sign-in uses: it accepts local addresses such as dev@localhost.
  email: z.email({ pattern: z.regexes.html5Email }).max(254),
  role: Role.optional(),
  organization_id: z.string().min(1).max(64).optional(),
});
export type CreateInviteBody = z.infer<typeof CreateInviteBody>;

export const InviteResponse = z.object({
  id: z.string(),
  email: z.string(),
  role: Role,
  organization_id: z.string(),
});

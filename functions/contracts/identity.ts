/** GET /whoami, GET /health, GET /models, POST /invites. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { IdempotencyHeaders, IdempotencyKey } from './common';
import { defineOperation } from './operation';

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

/** 503 of GET /health: what could not be reached. */
export const HealthUnavailableResponse = z.object({ message: z.string(), status: z.literal('unavailable') });

export const Model = z.object({
  name: z.string(),
  provider: z.string(),
  input_usd_per_mtok: z.number().optional().describe('USD per million input tokens, when the catalogue prices the model.'),
  output_usd_per_mtok: z.number().optional().describe('USD per million output tokens, when the catalogue prices the model.'),
});
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

export const healthOperation = defineOperation({
  route: routeOf('GET /health'),
  tag: 'Service',
  summary: "Check the service's health",
  description: 'Needs no credential. Checks that the table and the payload bucket answer.',
  input: {},
  responses: {
    200: { description: 'The service is healthy.', body: HealthResponse },
    503: { description: 'The table or the payload bucket cannot be reached.', body: HealthUnavailableResponse },
  },
  errors: [],
});

export const whoamiOperation = defineOperation({
  route: routeOf('GET /whoami'),
  tag: 'Service',
  summary: 'Name what the credential authenticates',
  description: '`kind` is `user` for a user bearer token, `api_key` for an organization API key.',
  input: {},
  responses: { 200: { description: 'The caller.', body: WhoamiResponse } },
  errors: [],
});

export const listModelsOperation = defineOperation({
  route: routeOf('GET /models'),
  tag: 'Service',
  summary: 'List the models agents can run on',
  description: "The deployment's catalogue (`MODEL_CATALOGUE`); locally, what the configured providers offer.",
  input: {},
  responses: { 200: { description: 'The model catalogue.', body: ModelsResponse } },
  errors: [],
});

export const createInviteOperation = defineOperation({
  route: routeOf('POST /invites'),
  tag: 'Invites',
  summary: 'Invite someone into the organization, or to found a new one',
  description:
    'Only `admin` users may invite (a member gets 403 with `code` `admin_required`). Without `organization_id` the invitee founds a new organization at first sign-in (role default `admin`); with it, they join that organization (role default `member`), which must be the caller\'s (else 404). The invite is redeemed at the invitee\'s first sign-in with that email. `Idempotency-Key` makes it retry-safe: the same key and body return the same invite, another body gives 409.',
  input: { headers: IdempotencyHeaders, body: CreateInviteBody },
  responses: {
    201: {
      description: 'Created.',
      body: InviteResponse,
      headers: { 'Idempotency-Key': { description: 'The key sent, when one was.', schema: IdempotencyKey } },
    },
  },
  errors: [404, 409],
});

/** Organization secrets: /secrets. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { defineOperation } from './operation';

export const SecretName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1 to 128 characters of A-Z, a-z, 0-9, _, . or -');

/** Secrets Manager stores at most 64 KiB per value. */
const MAX_SECRET_BYTES = 65_536;
const SecretValue = z
  .string()
  .min(1)
  .refine((value) => Buffer.byteLength(value, 'utf8') <= MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes`);

export const SecretNameParams = z.object({ name: SecretName });

export const CreateSecretBody = z.strictObject({ name: SecretName, value: SecretValue });

export const UpdateSecretBody = z.strictObject({ value: SecretValue });

export const Secret = z.object({ name: z.string(), masked_value: z.string() });

export const SecretsResponse = z.object({ secrets: z.array(Secret) });

const MASKING = 'Values are never returned: `masked_value` is `****` followed by the last 4 characters when the value has at least 16 characters, else `****`.';

export const listSecretsOperation = defineOperation({
  route: routeOf('GET /secrets'),
  tag: 'Secrets',
  summary: "List the organization's secrets, masked",
  description: MASKING,
  input: {},
  responses: { 200: { description: 'Every secret, masked.', body: SecretsResponse } },
  errors: [],
});

export const createSecretOperation = defineOperation({
  route: routeOf('POST /secrets'),
  tag: 'Secrets',
  summary: 'Store a new secret',
  description: `Agent configurations reference it as \`{{secret:NAME}}\`. A name that exists gives 400: rotate it with PUT. ${MASKING}`,
  input: { body: CreateSecretBody },
  responses: { 201: { description: 'Created.', body: Secret } },
  errors: [],
});

export const getSecretOperation = defineOperation({
  route: routeOf('GET /secrets/{name}'),
  tag: 'Secrets',
  summary: 'Read a secret, masked',
  description: MASKING,
  input: { params: SecretNameParams },
  responses: { 200: { description: 'The secret, masked.', body: Secret } },
  errors: [404],
});

export const updateSecretOperation = defineOperation({
  route: routeOf('PUT /secrets/{name}'),
  tag: 'Secrets',
  summary: "Rotate a secret's value",
  description: MASKING,
  input: { params: SecretNameParams, body: UpdateSecretBody },
  responses: { 200: { description: 'Rotated.', body: Secret } },
  errors: [404],
});

export const deleteSecretOperation = defineOperation({
  route: routeOf('DELETE /secrets/{name}'),
  tag: 'Secrets',
  summary: 'Delete a secret and its value',
  input: { params: SecretNameParams },
  responses: { 204: { description: 'Deleted.' } },
  errors: [404],
});

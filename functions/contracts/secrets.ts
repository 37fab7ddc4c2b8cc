/** Organization secrets: /secrets. */
import { z } from 'zod';

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

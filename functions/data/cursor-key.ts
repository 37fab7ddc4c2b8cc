/** The deployment's cursor signing key, a Secrets Manager secret read once per process. */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '#kit/config';

const secretsManager = new SecretsManagerClient({});

let key: Promise<Buffer> | undefined;

async function readKey(): Promise<Buffer> {
  const secretId = config.cursorKeySecretId;
  const { SecretString } = await secretsManager.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!SecretString) throw new Error(`secret ${secretId} has no string value`);
  return Buffer.from(SecretString, 'utf8');
}

/** The key cursors are signed with; a failed read is retried on the next call. */
export function cursorKey(): Promise<Buffer> {
  key ??= readKey().catch((error: unknown) => {
    key = undefined;
    throw error;
  });
  return key;
}

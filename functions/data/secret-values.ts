/**
 * Secret values in Secrets Manager, each under the deployment's prefix and its
 * organization's id, so IAM can confine every function to the prefix.
 */
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { config } from '#kit/config';

const secretsManager = new SecretsManagerClient({});

/** The Secrets Manager name of an organization's secret. */
export function secretId(organizationId: string, name: string): string {
  return `${config.secretPrefix}${organizationId}/${name}`;
}

/** Stores a value, creating the secret or adding a version to one left behind earlier. */
export async function writeSecretValue(organizationId: string, name: string, value: string): Promise<void> {
  const id = secretId(organizationId, name);
  try {
    await secretsManager.send(
      new CreateSecretCommand({
        Name: id,
        SecretString: value,
        Tags: [{ Key: 'agent-sessions:organization', Value: organizationId }],
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceExistsException')) throw error;
    await secretsManager.send(new PutSecretValueCommand({ SecretId: id, SecretString: value }));
  }
}

/** Deletes a secret at once (no recovery window, so the name can be reused). */
export async function deleteSecretValue(organizationId: string, name: string): Promise<void> {
  try {
    await secretsManager.send(
      new DeleteSecretCommand({ SecretId: secretId(organizationId, name), ForceDeleteWithoutRecovery: true }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
  }
}

/** A secret's value, read only inside a run (never by an HTTP route). */
export async function readSecretValue(organizationId: string, name: string): Promise<string> {
  const { SecretString } = await secretsManager.send(new GetSecretValueCommand({ SecretId: secretId(organizationId, name) }));
  if (SecretString === undefined) throw new Error(`secret ${name} has no string value`);
  return SecretString;
}

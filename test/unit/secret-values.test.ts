import 'aws-sdk-client-mock-vitest/extend';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { deleteSecretValue, secretId, writeSecretValue } from '#data/secret-values';

describe('secret values adapter', () => {
  const secretsManager = mockClient(SecretsManagerClient);

  beforeEach(() => {
    secretsManager.reset();
    vi.stubEnv('SECRET_PREFIX', 'agent-sessions/prod/');
  });

  it('names secrets under the deployment prefix and the organization', () => {
    expect(secretId('org_a', 'OPENAI_KEY')).toBe('agent-sessions/prod/org_a/OPENAI_KEY');
  });

  it('creates a new secret tagged with its organization', async () => {
    secretsManager.on(CreateSecretCommand).resolves({});

    await writeSecretValue('org_a', 'OPENAI_KEY', 'sk-value');

    expect(secretsManager).toHaveReceivedCommandWith(CreateSecretCommand, {
      Name: 'agent-sessions/prod/org_a/OPENAI_KEY',
      SecretString: 'sk-value',
      Tags: [{ Key: 'agent-sessions:organization', Value: 'org_a' }],
    });
    expect(secretsManager).not.toHaveReceivedCommand(PutSecretValueCommand);
  });

  it('adds a version when the secret was left behind by an earlier attempt', async () => {
    secretsManager.on(CreateSecretCommand).rejects(new ResourceExistsException({ message: 'exists', $metadata: {} }));
    secretsManager.on(PutSecretValueCommand).resolves({});

    await writeSecretValue('org_a', 'OPENAI_KEY', 'sk-new');

    expect(secretsManager).toHaveReceivedCommandWith(PutSecretValueCommand, {
      SecretId: 'agent-sessions/prod/org_a/OPENAI_KEY',
      SecretString: 'sk-new',
    });
  });

  it('passes other failures on', async () => {
    secretsManager.on(CreateSecretCommand).rejects(new Error('throttled'));

    await expect(writeSecretValue('org_a', 'K', 'v')).rejects.toThrow('throttled');
  });

  it('deletes without a recovery window so the name can be reused', async () => {
    secretsManager.on(DeleteSecretCommand).resolves({});

    await deleteSecretValue('org_a', 'K');

    expect(secretsManager).toHaveReceivedCommandWith(DeleteSecretCommand, {
      SecretId: 'agent-sessions/prod/org_a/K',
      ForceDeleteWithoutRecovery: true,
    });
  });

  it('treats an already deleted secret as deleted', async () => {
    secretsManager.on(DeleteSecretCommand).rejects(new ResourceNotFoundException({ message: 'gone', $metadata: {} }));

    await expect(deleteSecretValue('org_a', 'K')).resolves.toBeUndefined();
  });
});

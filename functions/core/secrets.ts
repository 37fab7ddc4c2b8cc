/**
 * Organization secrets. The value goes to Secrets Manager and is never read back here;
 * the table keeps the name and masked value that clients may see.
 */
import { InvalidInputError, NotFoundError } from './errors';
import {
  deleteSecretMetadata,
  getSecretMetadata,
  insertSecretMetadata,
  listSecretMetadata,
  replaceSecretMetadata,
  type SecretMetadata,
} from '#data/secrets';
import { deleteSecretValue, writeSecretValue } from '#data/secret-values';

export interface SecretView {
  name: string;
  masked_value: string;
}

/** `****` and the last 4 characters when the value has at least 16, else `****`. */
export function maskSecret(value: string): string {
  const chars = [...value];
  return chars.length >= 16 ? `****${chars.slice(-4).join('')}` : '****';
}

const view = ({ name, masked_value }: SecretMetadata): SecretView => ({ name, masked_value });

/** Stores a new secret; 400 when the name is taken (rotation is PUT). */
export async function createSecret(organizationId: string, name: string, value: string): Promise<SecretView> {
  const now = new Date().toISOString();
  const metadata: SecretMetadata = { name, masked_value: maskSecret(value), created_at: now, updated_at: now };
  if (!(await insertSecretMetadata(organizationId, metadata))) {
    throw new InvalidInputError(`secret ${name} already exists; rotate it with PUT /secrets/${name}`);
  }
  try {
    await writeSecretValue(organizationId, name, value);
  } catch (error) {
    // Without a stored value the name must not look taken.
    await deleteSecretMetadata(organizationId, name);
    throw error;
  }
  return view(metadata);
}

/** Rotates an existing secret's value. */
export async function rotateSecret(organizationId: string, name: string, value: string): Promise<SecretView> {
  const current = await getSecretMetadata(organizationId, name);
  if (!current) throw new NotFoundError(`secret ${name} not found`);
  await writeSecretValue(organizationId, name, value);
  const metadata = { ...current, masked_value: maskSecret(value), updated_at: new Date().toISOString() };
  if (!(await replaceSecretMetadata(organizationId, metadata))) {
    // Deleted while we rotated: the value written just now must not outlive the name.
    await deleteSecretValue(organizationId, name);
    throw new NotFoundError(`secret ${name} not found`);
  }
  return view(metadata);
}

/** One secret, masked. */
export async function readSecret(organizationId: string, name: string): Promise<SecretView> {
  const metadata = await getSecretMetadata(organizationId, name);
  if (!metadata) throw new NotFoundError(`secret ${name} not found`);
  return view(metadata);
}

/** Every secret of the organization, masked, by name. */
export async function listSecrets(organizationId: string): Promise<SecretView[]> {
  return (await listSecretMetadata(organizationId)).map(view);
}

/** Deletes a secret and its value. */
export async function deleteSecret(organizationId: string, name: string): Promise<void> {
  if (!(await deleteSecretMetadata(organizationId, name))) throw new NotFoundError(`secret ${name} not found`);
  await deleteSecretValue(organizationId, name);
}

/**
 * Organization secrets. The value goes to Secrets Manager and is never read back here;
 * the table keeps the name and masked value that clients may see.
 */
import { InvalidInputError, NotFoundError } from './errors';

export interface SecretMetadata {
  name: string;
  masked_value: string;
  created_at: string;
  updated_at: string;
}

export interface SecretView {
  name: string;
  masked_value: string;
}

/**
 * The secrets of one organization: metadata clients may see, and values kept apart from
 * it (writable and deletable here, never readable).
 */
export interface SecretStore {
  /** Records a new secret's metadata; false when the name is taken. */
  insert(metadata: SecretMetadata): Promise<boolean>;
  /** Replaces an existing secret's metadata; false when there is no such secret. */
  replace(metadata: SecretMetadata): Promise<boolean>;
  get(name: string): Promise<SecretMetadata | undefined>;
  /** Every secret's metadata, by name. */
  list(): Promise<SecretMetadata[]>;
  /** Removes a secret's metadata; false when there was none. */
  delete(name: string): Promise<boolean>;
  /** Stores a value, as the first or as a new version. */
  writeValue(name: string, value: string): Promise<void>;
  /** Deletes a value at once, so the name can be reused; nothing when there is none. */
  deleteValue(name: string): Promise<void>;
}

/** `****` and the last 4 characters when the value has at least 16, else `****`. */
export function maskSecret(value: string): string {
  const chars = [...value];
  return chars.length >= 16 ? `****${chars.slice(-4).join('')}` : '****';
}

const view = ({ name, masked_value }: SecretMetadata): SecretView => ({ name, masked_value });

const notFound = (name: string) => new NotFoundError(`secret ${name} not found`);

/** Stores a new secret; 400 when the name is taken (rotation is PUT). */
export async function createSecret(store: SecretStore, name: string, value: string): Promise<SecretView> {
  const now = new Date().toISOString();
  const metadata: SecretMetadata = { name, masked_value: maskSecret(value), created_at: now, updated_at: now };
  if (!(await store.insert(metadata))) {
    throw new InvalidInputError(`secret ${name} already exists; rotate it with PUT /secrets/${name}`);
  }
  try {
    await store.writeValue(name, value);
  } catch (error) {
    // Without a stored value the name must not look taken.
    await store.delete(name);
    throw error;
  }
  return view(metadata);
}

/** Rotates an existing secret's value. */
export async function rotateSecret(store: SecretStore, name: string, value: string): Promise<SecretView> {
  const current = await store.get(name);
  if (!current) throw notFound(name);
  await store.writeValue(name, value);
  const metadata = { ...current, masked_value: maskSecret(value), updated_at: new Date().toISOString() };
  if (!(await store.replace(metadata))) {
    // Deleted while we rotated: the value written just now must not outlive the name.
    await store.deleteValue(name);
    throw notFound(name);
  }
  return view(metadata);
}

/** One secret, masked. */
export async function readSecret(store: SecretStore, name: string): Promise<SecretView> {
  const metadata = await store.get(name);
  if (!metadata) throw notFound(name);
  return view(metadata);
}

/** Every secret of the organization, masked, by name. */
export async function listSecrets(store: SecretStore): Promise<SecretView[]> {
  return (await store.list()).map(view);
}

/** Deletes a secret and its value. */
export async function deleteSecret(store: SecretStore, name: string): Promise<void> {
  if (!(await store.delete(name))) throw notFound(name);
  await store.deleteValue(name);
}

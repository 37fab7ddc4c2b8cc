/** Minting organization API keys. */
import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX } from './identity';
import { newId, sha256 } from '#kit/ids';
import { putToken, type Token } from '#data/tokens';

/** Characters of a key kept in its record so people can tell their keys apart. */
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** Creates an API key; the returned `key` exists nowhere else (only its hash is stored). */
export async function mintToken(organizationId: string, name: string): Promise<Token & { key: string }> {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const token: Token = {
    id: newId('tok'),
    name,
    created_at: new Date().toISOString(),
    key_prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
  };
  await putToken(organizationId, token, sha256(key));
  return { ...token, key };
}

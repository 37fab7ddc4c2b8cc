/** Organization API keys: minting, reading and revoking them (only a key's hash is ever stored). */
import { randomBytes } from 'node:crypto';
import { newId, sha256 } from '#kit/ids';
import { NotFoundError } from './errors';
import { API_KEY_PREFIX } from './identity';

export interface Token {
  id: string;
  name: string;
  created_at: string;
  last_used_at?: string;
  key_prefix: string;
}

/** The API keys of one organization. */
export interface TokenStore {
  /** Stores a key's record and its lookup by hash together. */
  put(token: Token, keyHash: string): Promise<void>;
  /** Every key's record, in id order. */
  list(): Promise<Token[]>;
  get(tokenId: string): Promise<Token | undefined>;
  /** Revokes a key at once; false when there is no such key. */
  delete(tokenId: string): Promise<boolean>;
}

/** Characters of a key kept in its record so people can tell their keys apart. */
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** Creates an API key; the returned `key` exists nowhere else (only its hash is stored). */
export async function mintToken(store: TokenStore, name: string): Promise<Token & { key: string }> {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const token: Token = {
    id: newId('tok'),
    name,
    created_at: new Date().toISOString(),
    key_prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
  };
  await store.put(token, sha256(key));
  return { ...token, key };
}

/** One key's record; 404 when the organization has no such key. */
export async function readToken(store: TokenStore, tokenId: string): Promise<Token> {
  const token = await store.get(tokenId);
  if (!token) throw new NotFoundError(`token ${tokenId} not found`);
  return token;
}

/** Revokes a key: its next request is refused. 404 when the organization has no such key. */
export async function revokeToken(store: TokenStore, tokenId: string): Promise<void> {
  if (!(await store.delete(tokenId))) throw new NotFoundError(`token ${tokenId} not found`);
}

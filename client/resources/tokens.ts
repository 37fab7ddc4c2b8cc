/** Organization API keys (user credentials only). */
import { path, type RequestOptions, type Transport } from '../core';
import type { CreatedToken, Token, TokenCreateParams, TokenListResponse } from '../types';

export class Tokens {
  constructor(private readonly transport: Transport) {}

  /** Mints a key; `key` is shown only in this answer. Not re-sent once it may have arrived (it would mint two). */
  async create(params: TokenCreateParams, options: RequestOptions = {}): Promise<CreatedToken> {
    return this.transport.post<CreatedToken>({ path: '/tokens', body: JSON.stringify(params) }, options);
  }

  /** Every key of the organization (never the key itself). */
  async list(options: RequestOptions = {}): Promise<TokenListResponse> {
    return this.transport.get<TokenListResponse>({ path: '/tokens' }, options);
  }

  /** One key's record. */
  async get(id: string, options: RequestOptions = {}): Promise<Token> {
    return this.transport.get<Token>({ path: path`/tokens/${id}` }, options);
  }

  /** Revokes a key at once. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: path`/tokens/${id}` }, options);
  }
}

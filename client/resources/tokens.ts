/** Organization API keys (user credentials only). */
import { path, type RequestOptions, type Transport } from '../core';
import type { CreatedToken, Token, TokenCreateParams, TokenListResponse } from '../types';

export class Tokens {
  constructor(private readonly transport: Transport) {}

  /** Mints a key; `key` is shown only in this answer. Not re-sent once it may have arrived (it would mint two). */
  async create(params: TokenCreateParams, options: RequestOptions = {}): Promise<CreatedToken> {
    return (await this.transport.request<CreatedToken>({ method: 'POST', path: '/tokens', body: JSON.stringify(params), retry: 'unsent-only' }, options)).body;
  }

  /** Every key of the organization (never the key itself). */
  async list(options: RequestOptions = {}): Promise<TokenListResponse> {
    return (await this.transport.request<TokenListResponse>({ method: 'GET', path: '/tokens', retry: 'idempotent' }, options)).body;
  }

  /** One key's record. */
  async get(id: string, options: RequestOptions = {}): Promise<Token> {
    return (await this.transport.request<Token>({ method: 'GET', path: path`/tokens/${id}`, retry: 'idempotent' }, options)).body;
  }

  /** Revokes a key at once. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.request({ method: 'DELETE', path: path`/tokens/${id}`, retry: 'idempotent' }, options);
  }
}

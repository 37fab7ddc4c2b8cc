/** The console's one client of the API, the credential it holds, and how errors read. */
import { AgentSessions, APIError, AgentSessionsError } from '../../client/index';
import type { ConsoleConfig } from '../config';

const TOKEN_KEY = 'agent-sessions.token';

let config: ConsoleConfig | undefined;
let client: AgentSessions | undefined;
let onUnauthorized: () => void = () => undefined;

/** Reads `config.json`, served next to index.html. */
export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch('/console/config.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  config = (await response.json()) as ConsoleConfig;
  return config;
}

export function consoleConfig(): ConsoleConfig {
  if (!config) throw new Error('config.json is not loaded yet');
  return config;
}

/** The user's bearer token; kept in sessionStorage only, so it dies with the tab. */
export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  client = undefined;
}

export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  client = undefined;
}

/** What to do when the API refuses the credential (401): sign in again. */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/** The typed client, with the current token. */
export function api(): AgentSessions {
  if (!client) {
    const token = storedToken() ?? undefined;
    client = new AgentSessions({
      baseUrl: consoleConfig().apiUrl,
      ...(token ? { token } : {}),
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 401 && token) {
          clearToken();
          onUnauthorized();
        }
        return response;
      },
    });
  }
  return client;
}

/** The text to show for a failure: the API's own `message`, with its status. */
export function errorMessage(error: unknown): string {
  if (error instanceof APIError) return `${error.message} (${error.status}${error.body.code ? ` ${error.body.code}` : ''})`;
  if (error instanceof AgentSessionsError || error instanceof Error) return error.message;
  return String(error);
}

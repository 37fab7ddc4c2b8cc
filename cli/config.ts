/**
 * Where the CLI finds its service and credential: flags, then the environment
 * (AGENT_SESSIONS_URL, AGENT_SESSIONS_TOKEN), then a profile of the profile file, then
 * the local service's default address.
 *
 * The profile file is AGENT_SESSIONS_CONFIG, else $XDG_CONFIG_HOME/agent-sessions/config.json,
 * else ~/.config/agent-sessions/config.json: `{"profiles": {"<name>": {"url", "token"}}}`.
 * It holds credentials, so it is written with mode 0600 in a 0700 directory.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `npm start` listens on. */
export const DEFAULT_URL = 'http://127.0.0.1:3000';
export const DEFAULT_PROFILE = 'default';

export interface Profile {
  url?: string;
  token?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export interface Settings {
  url: string;
  token: string | undefined;
  profile: string;
  configFile: string;
}

/** A profile file that exists but cannot be used. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The profile file's path for this environment. */
export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.AGENT_SESSIONS_CONFIG) return env.AGENT_SESSIONS_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'agent-sessions', 'config.json');
}

/** The profile file's contents; empty when there is none yet. */
export async function loadConfig(file: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new ConfigError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    if (!parsed || typeof parsed !== 'object' || (parsed.profiles !== undefined && typeof parsed.profiles !== 'object')) throw new Error('not an object with "profiles"');
    return { profiles: parsed.profiles ?? {} };
  } catch (error) {
    throw new ConfigError(`${file} is not a valid profile file (${(error as Error).message}); fix or delete it`);
  }
}

/** Sets (or, with `undefined` fields, clears) fields of one profile, keeping the others. */
export async function saveProfile(file: string, name: string, changes: Profile): Promise<void> {
  const config = await loadConfig(file);
  const profile = { ...config.profiles[name], ...changes };
  for (const key of Object.keys(profile) as (keyof Profile)[]) if (profile[key] === undefined) delete profile[key];
  config.profiles[name] = profile;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // Written beside and renamed, so a crash never leaves half a file; the mode is set
  // before the token is in it, and again in case the file pre-existed with another.
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

/** The service and credential to use, each from the first place that names it. */
/**
 * The service and credential to use, each from the first place that names it. A
 * profile's token goes only to that profile's own service, never to another URL given
 * by flag or environment. `creating` allows a named profile that does not exist yet (login).
 */
export async function resolveSettings(
  flags: { url?: string; token?: string; profile?: string },
  env: NodeJS.ProcessEnv,
  { creating = false } = {},
): Promise<Settings> {
  const configFile = configPath(env);
  const profileName = flags.profile ?? (env.AGENT_SESSIONS_PROFILE || DEFAULT_PROFILE);
  const config = await loadConfig(configFile);
  const profile = config.profiles[profileName];
  if (!profile && !creating && profileName !== DEFAULT_PROFILE) {
    throw new ConfigError(`no profile "${profileName}" in ${configFile}; create it with: agent-sessions login --profile ${profileName}`);
  }
  const url = normalizeUrl(flags.url ?? (env.AGENT_SESSIONS_URL || undefined) ?? profile?.url ?? DEFAULT_URL);
  const profileToken = profile?.token && (!profile.url || normalizeUrl(profile.url) === url) ? profile.token : undefined;
  return { url, token: flags.token ?? (env.AGENT_SESSIONS_TOKEN || undefined) ?? profileToken, profile: profileName, configFile };
}

/** The URL without trailing slashes; throws a ConfigError for something that is not http(s). */
export function normalizeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`"${url}" is not a URL; give the service's base URL, e.g. ${DEFAULT_URL}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`"${url}" is not an http(s) URL`);
  return url.replace(/\/+$/, '');
}

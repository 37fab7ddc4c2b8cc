/** What every command file shares: the command shape, the page options and the output helpers. */
import type { AgentSessions } from '../../client/index';
import type { PagePromise } from '../../client/pagination';
import type { Settings } from '../config';
import { UsageError } from '../errors';

export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** A terminal's size, for the live view. */
  columns?: number;
  rows?: number;
}

/** Where the CLI reads and writes: the process's own streams, or a test's. */
export interface Io {
  stdout: Stream;
  stderr: Stream;
  stdin: AsyncIterable<Buffer | string> & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Calls `handler` on each Ctrl-C until the returned function is called (default: the process's SIGINT). */
  onInterrupt?(handler: () => void): () => void;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in help, e.g. `SECONDS`. */
  value?: string;
  /** A string option that may be given again and again; its value is then the list. */
  multiple?: boolean;
  help: string;
}

export interface Context {
  values: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
  io: Io;
  json: boolean;
  settings(options?: { creating?: boolean }): Promise<Settings>;
  client(): Promise<AgentSessions>;
}

export interface Command {
  name: string;
  /** Positional arguments as help shows them. */
  args?: string;
  summary: string;
  options?: Record<string, OptionSpec>;
  /** Fewest and most positional arguments. */
  positionals?: [number, number];
  run(context: Context): Promise<void>;
}

export const PAGE_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: 'string', value: 'N', help: 'items per page' },
  after: { type: 'string', value: 'CURSOR', help: 'start after this cursor (a previous page\'s next_cursor)' },
  all: { type: 'boolean', help: 'follow the cursors and show every page' },
};

/** Writes `text` as one line (adding the newline it lacks). */
export function write(stream: Stream, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Prints `value` as JSON in --json mode, else what `human` renders. */
export function output(context: Context, value: unknown, human: () => string): void {
  write(context.io.stdout, context.json ? JSON.stringify(value, null, 2) : human());
}

/** The option's value when it was given one. */
export function stringOption(context: Context, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of an option given `multiple` times (none when it was not given). */
export function listOption(context: Context, name: string): string[] {
  const value = context.values[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

/** The option's value; a usage error when it is missing or empty. */
export function requiredOption(context: Context, name: string): string {
  const value = stringOption(context, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** The option as a whole number from `min` to `max`; a usage error for anything else. */
export function intOption(context: Context, name: string, min: number, max: number): number | undefined {
  const text = stringOption(context, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${text}"`);
  return value;
}

/** All of stdin without its final newline, prompting for it on a terminal. */
export async function readStdin(io: Io, prompt: string): Promise<string> {
  if (io.stdin.isTTY) io.stderr.write(`${prompt} (end with Ctrl-D): `);
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * One page of a list (or every page with --all): JSON as the service sent it (merged
 * under `key` with --all), else `render`; a hint on stderr when more pages follow.
 */
export async function showList<Page extends { next_cursor?: string }, Item>(
  context: Context,
  list: PagePromise<Page, Item>,
  key: string,
  render: (items: Item[], first: Page) => string,
): Promise<void> {
  if (context.values.all) {
    const first = await list;
    const items = await list.all();
    const { next_cursor: _, ...rest } = first;
    output(context, { ...rest, [key]: items }, () => render(items, first));
    return;
  }
  const page = await list;
  output(context, page, () => render((page as unknown as Record<string, Item[]>)[key]!, page));
  if (page.next_cursor !== undefined && !context.json) write(context.io.stderr, `more: add --after ${page.next_cursor} (or --all)`);
}

/**
 * Bubblewrap (`bwrap`, Debian package `bubblewrap`) for the local cloud: the terminal tool's
 * execution environments run in it (a read-only system, their own `/tmp`, no sight of the
 * checkout or the data, an unprivileged user, the network as on Lambda), and DynamoDB Local
 * runs in a network namespace of its own, so nothing of it listens beyond loopback.
 */
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';

/** Where bubblewrap was looked for. */
const BWRAP = 'bwrap';
// The temporary directory of an isolated command, inside its own /tmp.
const SANDBOX_TMP = '/tmp/lambda';
// The unprivileged user and group commands run as ("nobody").
const NOBODY = '65534';

/** Whether bwrap can make the namespaces the local cloud asks of it here; the reason when not. */
export function bwrapUsable(): { usable: true } | { usable: false; reason: string } {
  const probe = spawnSync(BWRAP, [...baseArgs(), '--unshare-all', '--uid', NOBODY, '--gid', NOBODY, '--', 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) {
    const missing = (probe.error as NodeJS.ErrnoException).code === 'ENOENT';
    return { usable: false, reason: missing ? 'bubblewrap (bwrap) is not installed' : `bwrap could not run (${probe.error.message})` };
  }
  if (probe.status !== 0) return { usable: false, reason: `bwrap cannot create namespaces here (${probe.stderr.trim().split('\n').at(-1) ?? `exit ${probe.status}`})` };
  return { usable: true };
}

/** The system, read-only, with devices and a proc of its own namespace; ending with the parent. */
function baseArgs(): string[] {
  return ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--die-with-parent'];
}

export interface IsolationOptions {
  /** Directories the command must not see (the checkout, the data directory, home): each is replaced by an empty one. */
  hidden: readonly string[];
  /** Files the command needs to start (its runner and function bundles), shown read-only at their own paths. */
  exposed: readonly string[];
}

/**
 * `bwrap` arguments that run `command args` as an unprivileged user in namespaces of its own
 * (keeping the network, as Lambda's environments have it): the system read-only, its own
 * `/tmp` (with `/tmp/lambda` its TMPDIR and HOME), `hidden` directories empty, `exposed`
 * files' directories shown read-only. Its process ends with the parent.
 */
export function isolatedCommand(command: string, args: readonly string[], options: IsolationOptions): { command: string; args: string[] } {
  const hidden = options.hidden.flatMap((dir) => ['--tmpfs', dir]);
  const exposed = [...new Set(options.exposed.map((file) => dirname(file)))].flatMap((dir) => ['--ro-bind', dir, dir]);
  return {
    command: BWRAP,
    args: [
      ...baseArgs(),
      // A /tmp of its own, as each Lambda execution environment has. Its temporary
      // directory is a folder of it: hidden or shown directories under /tmp (a checkout
      // may live there) leave mount points in /tmp that nothing must try to clear.
      '--tmpfs', '/tmp',
      '--dir', SANDBOX_TMP,
      ...hidden,
      ...exposed,
      '--unshare-all',
      '--share-net',
      '--uid', NOBODY,
      '--gid', NOBODY,
      '--setenv', 'TMPDIR', SANDBOX_TMP,
      '--setenv', 'HOME', SANDBOX_TMP,
      '--chdir', SANDBOX_TMP,
      '--',
      command,
      ...args,
    ],
  };
}

/**
 * `bwrap` arguments that run `command args` in a network namespace of its own (only its own
 * loopback), writing only `writable` directories; everything else as the local cloud sees
 * it, read-only (the checkout may well live under /tmp).
 */
export function withoutNetwork(command: string, args: readonly string[], writable: readonly string[]): { command: string; args: string[] } {
  return {
    command: BWRAP,
    args: [...baseArgs(), ...writable.flatMap((dir) => ['--bind', dir, dir]), '--unshare-net', '--unshare-pid', '--', command, ...args],
  };
}

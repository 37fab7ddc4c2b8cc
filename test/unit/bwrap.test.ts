import { afterEach, describe, expect, it } from 'vitest';
import { assertRunnable } from '#core/sessions';
import { InvalidInputError } from '#core/errors';
import { isolatedCommand, withoutNetwork } from '#local/bwrap';

describe('bubblewrap arguments', () => {
  it('run a command unprivileged on a read-only system, hiding directories and showing only the files it starts from', () => {
    const { command, args } = isolatedCommand('/usr/bin/node', ['/repo/node_modules/.cache/b/runner-1/index.mjs'], {
      hidden: ['/repo', '/data'],
      exposed: ['/repo/node_modules/.cache/b/runner-1/index.mjs', '/repo/node_modules/.cache/b/sandbox-2/index.mjs'],
    });

    expect(command).toBe('bwrap');
    const text = args.join(' ');
    expect(text).toContain('--ro-bind / /');
    expect(text).toContain('--tmpfs /tmp --dir /tmp/lambda');
    expect(text).toContain('--setenv TMPDIR /tmp/lambda');
    expect(text).toContain('--tmpfs /repo --tmpfs /data');
    // Hidden first, then the bundles' own directories shown again, read-only.
    expect(text.indexOf('--tmpfs /repo')).toBeLessThan(text.indexOf('--ro-bind /repo/node_modules/.cache/b/runner-1 /repo/node_modules/.cache/b/runner-1'));
    expect(text).toContain('--ro-bind /repo/node_modules/.cache/b/sandbox-2 /repo/node_modules/.cache/b/sandbox-2');
    expect(text).toContain('--unshare-all --share-net --uid 65534 --gid 65534');
    expect(text).toContain('--die-with-parent');
    expect(args.slice(-3)).toEqual(['--', '/usr/bin/node', '/repo/node_modules/.cache/b/runner-1/index.mjs']);
  });

  it('run a server in a network namespace of its own, writing only where it must', () => {
    const { args } = withoutNetwork('java', ['-jar', 'x.jar'], ['/data/dynamodb']);

    expect(args.join(' ')).toContain('--bind /data/dynamodb /data/dynamodb');
    expect(args).toContain('--unshare-net');
    expect(args).not.toContain('--share-net');
    // The real /tmp stays visible (read-only): a checkout may live there.
    expect(args.join(' ')).not.toContain('--tmpfs /tmp');
    expect(args.slice(-4)).toEqual(['--', 'java', '-jar', 'x.jar']);
  });
});

describe('a deployment without a sandbox function', () => {
  const saved = process.env.SANDBOX_FUNCTION_NAME;
  afterEach(() => {
    if (saved === undefined) delete process.env.SANDBOX_FUNCTION_NAME;
    else process.env.SANDBOX_FUNCTION_NAME = saved;
  });

  it('refuses a configuration asking for the terminal tool with a clear 400, and runs the others', () => {
    delete process.env.SANDBOX_FUNCTION_NAME;
    const agent = { model: { name: 'gpt-4.1', provider: { name: 'openai' as const } } };

    expect(() => assertRunnable({ ...agent, tools: { terminal: {} } })).toThrow(new InvalidInputError('this deployment does not offer the terminal tool'));
    expect(() => assertRunnable(agent)).not.toThrow();
    process.env.SANDBOX_FUNCTION_NAME = 'sandbox';
    expect(() => assertRunnable({ ...agent, tools: { terminal: {} } })).not.toThrow();
  });
});

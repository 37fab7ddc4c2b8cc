/**
 * Every listening TCP socket a process and its descendants hold, read from /proc without
 * sending any traffic: the process tree from each process's parent, socket inodes from its
 * file descriptors, and the listening entries of `/proc/<pid>/net/tcp{,6}` (each process's
 * own network namespace). A socket in a namespace whose only interface is loopback counts
 * as contained, wherever in that namespace it listens.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface ListeningSocket {
  pid: number;
  /** The process's command name. */
  command: string;
  address: string;
  port: number;
  /** Reachable only over a loopback interface: a loopback address, or a namespace with only `lo`. */
  loopbackOnly: boolean;
}

const LISTEN = '0A';

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The process and every descendant, by each process's parent in /proc/<pid>/stat. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = read(`/proc/${pid}/stat`);
    // The command may hold spaces and parentheses: the fields after its last ')' are fixed.
    const rest = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(rest?.[1]);
    if (!Number.isInteger(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const tree: number[] = [];
  for (const queue = [root]; queue.length; ) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/** `0100007F:1F90` (IPv4, little-endian words) or a 32-digit IPv6 form, as text. */
function decodeAddress(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  const bytes: number[] = [];
  for (let word = 0; word < 4; word++) {
    const chunk = hex.slice(word * 8, word * 8 + 8);
    for (let i = 3; i >= 0; i--) bytes.push(parseInt(chunk.slice(i * 2, i * 2 + 2), 16));
  }
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16));
  const text = groups.join(':');
  if (text === '0:0:0:0:0:0:0:0') return '::';
  if (text === '0:0:0:0:0:0:0:1') return '::1';
  if (text.startsWith('0:0:0:0:0:ffff:')) return `::ffff:${bytes.slice(12).join('.')}`;
  return text;
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}

/** Whether a process's network namespace has no interface but loopback. */
function onlyLoopbackInterface(pid: number): boolean {
  const devices = read(`/proc/${pid}/net/dev`);
  if (!devices) return false;
  const names = devices.split('\n').slice(2).map((line) => line.split(':')[0]!.trim()).filter(Boolean);
  return names.length > 0 && names.every((name) => name === 'lo');
}

/** The listening sockets of `root` (default this process) and its descendants. */
export function listeningSockets(root = process.pid): ListeningSocket[] {
  const found: ListeningSocket[] = [];
  for (const pid of processTree(root)) {
    const inodes = socketInodes(pid);
    if (!inodes.size) continue;
    const command = read(`/proc/${pid}/comm`)?.trim() ?? '?';
    const contained = onlyLoopbackInterface(pid);
    for (const table of ['tcp', 'tcp6']) {
      for (const line of (read(`/proc/${pid}/net/${table}`) ?? '').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields.length < 10 || fields[3] !== LISTEN || !inodes.has(fields[9]!)) continue;
        const [hexAddress, hexPort] = fields[1]!.split(':');
        const address = decodeAddress(hexAddress!);
        found.push({ pid, command, address, port: parseInt(hexPort!, 16), loopbackOnly: contained || isLoopback(address) });
      }
    }
  }
  return found;
}

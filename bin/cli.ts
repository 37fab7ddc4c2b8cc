/** `agent-sessions`: the command line over the typed client (see cli/main.ts; `--help` lists everything). */
import { runCli } from '../cli/main';

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });

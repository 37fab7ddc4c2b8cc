#!/usr/bin/env node
// The `agent-sessions` bin: runs the TypeScript CLI through tsx's loader, so `npx
// agent-sessions` works in a clean clone right after `npm ci`, with no build step.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');

/**
 * Starts one local cloud, in memory and on a free port, in a process of its own for the
 * whole integration run, and hands its base URL, service environment and log file to the
 * test files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { DEFAULT_MODEL_CATALOGUE } from '#kit/config';
import { startCloudProcess } from '#local/cloud-process';
import { startFakeBedrock } from '../fakes/bedrock-server';

/**
 * Bedrock model ids the integration tests run (each test file its own, so parallel files
 * never share a fake queue); bedrock runs only catalogued models.
 */
const TEST_BEDROCK_MODELS = ['test.providers-answer-v1:0', 'test.providers-retry-v1:0'];

declare module 'vitest' {
  export interface ProvidedContext {
    /** The gateway, e.g. `http://127.0.0.1:41234`. */
    baseUrl: string;
    /** The service environment: endpoints of the emulators, table and bucket names. */
    serviceEnv: Record<string, string>;
    /** Everything the service wrote to stdout and stderr (JSON log lines) during the run. */
    serviceLogFile: string;
  }
}

/** Vitest global setup: returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logDir = await mkdtemp(join(tmpdir(), 'agent-sessions-integration-'));
  const logFile = join(logDir, 'service.log');
  // The Bedrock endpoint is one per process: one fake for the whole run, scripted by the
  // test files over HTTP, and it must listen before the cloud reads its environment.
  const bedrock = await startFakeBedrock();
  const providerEnv = {
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
    MODEL_CATALOGUE: [DEFAULT_MODEL_CATALOGUE, ...TEST_BEDROCK_MODELS.map((id) => `bedrock/${id}`)].join(','),
  };
  // The helpers sign in as this founder, whatever the developer's own environment says.
  const cloud = await startCloudProcess({ port: 0, dataDir: null, env: { FOUNDER_EMAILS: 'dev@localhost', ATTEMPT_TIMEOUT_SECONDS: '6', ...providerEnv }, logFile }).catch(
    async (error: unknown) => {
      await bedrock.close();
      throw error;
    },
  );
  project.provide('baseUrl', cloud.baseUrl);
  project.provide('serviceEnv', cloud.env);
  project.provide('serviceLogFile', logFile);
  return async () => {
    await cloud.stop();
    await bedrock.close();
    await rm(logDir, { recursive: true, force: true });
  };
}

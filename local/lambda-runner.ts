/**
 * The child side of a local Lambda sandbox (see `step-functions.ts`): one process per
 * execution environment, serving one function, one invocation at a time, and kept warm
 * between invocations as Lambda keeps its environments. Invocations arrive over IPC; the
 * handler module is imported at the first one (init), then `handler(event, context)` is
 * called with a Lambda-like context. The answer is the result as JSON text, or the error
 * as Lambda reports it: `{errorType, errorMessage, trace}`. Failures Lambda treats as
 * fatal to the environment (init errors, uncaught exceptions, unhandled rejections) are
 * reported and then end the process, so the next invocation starts a fresh one.
 */
import { pathToFileURL } from 'node:url';

/** One invocation, sent by the parent. */
export interface InvokeMessage {
  /** Absolute path of the handler module. */
  module: string;
  event: unknown;
  functionName: string;
  invokedFunctionArn: string;
  awsRequestId: string;
  /** The tenant of a tenant-isolated function's invocation: `context.tenantId`, as on Lambda. */
  tenantId?: string;
  /** The function's timeout, counted from the handler call (init is not part of it, as on Lambda). */
  timeoutMs: number;
}

/** Sent by the parent to an environment about to serve `functionName`: import its module now (init) and say so. */
export interface InitMessage {
  init: { module: string; functionName: string };
}

/** A function error, shaped as Lambda reports it. */
export interface LambdaError {
  errorType: string;
  errorMessage: string;
  trace?: string[];
}

/** The answer to an invocation: its result as JSON text, or its error (`final` when the process exits next). */
export type InvokeAnswer = { awsRequestId: string; payload: string } | { awsRequestId: string; error: LambdaError; final?: true };

/** Progress the runner reports: init is done (the handler is loaded), or the handler was just called. */
export type RunnerNotice = { initialized: true } | { awsRequestId: string; started: true };

type Handler = (event: unknown, context: object) => unknown;

let handler: Handler | undefined;
let current: InvokeMessage | undefined;

function toLambdaError(error: unknown, errorType?: string): LambdaError {
  if (error instanceof Error) {
    return { errorType: errorType ?? error.name, errorMessage: error.message, trace: error.stack?.split('\n') ?? [] };
  }
  return { errorType: errorType ?? 'Error', errorMessage: String(error) };
}

function answer(message: InvokeAnswer | RunnerNotice): Promise<void> {
  // The callback fires once the message is written: exiting earlier can lose it.
  return new Promise((resolve) => process.send?.(message, () => resolve()) ?? resolve());
}

/** Reports a failure that ends this environment, then exits. */
async function fatal(error: LambdaError): Promise<never> {
  if (current) await answer({ awsRequestId: current.awsRequestId, error, final: true });
  process.exit(1);
}

/** Imports the module once, mapping failures to the error types of Lambda's Node.js runtime. */
async function loadHandler(message: Pick<InvokeMessage, 'module' | 'functionName'>): Promise<Handler> {
  if (handler) return handler;
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(message.module).href)) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return fatal(toLambdaError(error, 'Runtime.ImportModuleError'));
    return fatal(toLambdaError(error, error instanceof SyntaxError ? 'Runtime.UserCodeSyntaxError' : undefined));
  }
  if (typeof exports.handler !== 'function') {
    const errorMessage = `${message.functionName}.handler is undefined or not exported`;
    return fatal({ errorType: 'Runtime.HandlerNotFound', errorMessage });
  }
  handler = exports.handler as Handler;
  return handler;
}

async function invoke(message: InvokeMessage): Promise<void> {
  current = message;
  const run = await loadHandler(message);
  // The function's time starts now, as Lambda's does after init.
  const deadline = Date.now() + message.timeoutMs;
  await answer({ awsRequestId: message.awsRequestId, started: true });
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: message.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: message.invokedFunctionArn,
    memoryLimitInMB: '1024',
    awsRequestId: message.awsRequestId,
    ...(message.tenantId !== undefined ? { tenantId: message.tenantId } : {}),
    logGroupName: `/aws/lambda/${message.functionName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let reply: InvokeAnswer;
  try {
    // Lambda serializes the result as JSON: undefined becomes null, Dates become strings.
    const payload = JSON.stringify(await run(message.event, context)) ?? 'null';
    reply = { awsRequestId: message.awsRequestId, payload };
  } catch (error) {
    reply = { awsRequestId: message.awsRequestId, error: toLambdaError(error) };
  }
  // Still current while the answer is written: a fatal error meanwhile answers again (the
  // parent keeps the first) and exits only once both are written, in order.
  await answer(reply);
  current = undefined;
}

process.on('message', (message: InvokeMessage | InitMessage) => {
  if ('init' in message) void loadHandler(message.init).then(() => answer({ initialized: true }));
  else void invoke(message);
});
// The parent went away (however it died): nobody is left to answer.
process.on('disconnect', () => process.exit(0));
process.on('uncaughtException', (error) => void fatal(toLambdaError(error)));
process.on('unhandledRejection', (reason) => {
  const errorMessage = reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
  void fatal({ errorType: 'Runtime.UnhandledPromiseRejection', errorMessage });
});

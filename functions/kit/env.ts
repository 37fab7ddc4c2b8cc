/**
 * The names of the environment variables the service reads, declared once: `config.ts`
 * reads them, the CDK bind helpers (`lib/`) set them on each function, and the local cloud
 * sets them for itself. No import: every part of the service, and the CDK app, may use it.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  payloadBucket: 'PAYLOAD_BUCKET',
  secretPrefix: 'SECRET_PREFIX',
  cursorKeySecretId: 'CURSOR_KEY_SECRET_ID',
  authIssuer: 'AUTH_ISSUER',
  authAudience: 'AUTH_AUDIENCE',
  founderEmails: 'FOUNDER_EMAILS',
  invocationQuota: 'INVOCATION_QUOTA',
  attemptTimeoutSeconds: 'ATTEMPT_TIMEOUT_SECONDS',
  maxAttempts: 'MAX_ATTEMPTS',
  spanRetentionSeconds: 'SPAN_RETENTION_SECONDS',
  stateMachineArn: 'STATE_MACHINE_ARN',
  deliveryStateMachineArn: 'DELIVERY_STATE_MACHINE_ARN',
  loopbackUrls: 'ALLOW_LOOPBACK_URLS',
  waitSliceSeconds: 'WAIT_SLICE_SECONDS',
  sandboxFunctionName: 'SANDBOX_FUNCTION_NAME',
  modelCatalogue: 'MODEL_CATALOGUE',
  logLevel: 'LOG_LEVEL',
} as const;

/**
 * Imported first by each benchmark entry: what the benchmark itself runs in process
 * (slices of the harness bench) logs only errors and emits no metric lines, so the
 * figures are what is printed.
 */
process.env.LOG_LEVEL ??= 'error';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// Node 20.19 is supported (CONTRACT.md); the SDK's notice about its future is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Building API Gateway (payload 2.0) responses. */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** A JSON response; a 204 carries no body. */
export function json(status: number, body?: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  if (status === 204 || body === undefined) return { statusCode: status, headers };
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** POST /sessions/{id}: runs or resumes a session; 200, 202, 502 or 504 by how the run went. */
import { runSessionOperation } from '#contracts/sessions';
import { newId } from '#kit/ids';
import { runSession, sessionView } from '#core/sessions';
import { acceptanceStore, attemptStore, runEngine, sessionStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(runSessionOperation, async ({ principal, params, query, headers, body, rawBody, setHeader }) => {
  const invocationKey = headers['idempotency-key'] ?? newId('inv');
  setHeader('idempotency-key', invocationKey);
  const { organizationId } = principal;
  const stores = {
    acceptance: acceptanceStore(organizationId),
    attempts: attemptStore(organizationId),
    sessions: sessionStore(organizationId),
    engine: runEngine(organizationId),
  };
  const answer = await runSession(
    stores,
    {
      organizationId,
      sessionId: params.id,
      invocationKey,
      rawBody,
      agentName: body.agent_name,
      agent: body.agent,
      userPrompt: body.user_prompt,
    },
    query.wait_timeout_seconds,
  );
  const session = sessionView(answer.session);
  switch (answer.outcome) {
    case 'succeeded':
      return { status: 200, body: { session, ...(answer.message ? { message: answer.message } : {}) } };
    case 'failed':
      return { status: 502, body: { message: answer.invocation.failure?.message ?? 'the run failed', kind: answer.invocation.failure?.kind ?? 'internal' } };
    case 'accepted':
      return { status: 202, body: { session } };
    case 'timeout':
      return {
        status: 504,
        body: { message: 'the wait ended before the run did; re-send the same request to re-attach', invocation_key: invocationKey },
      };
  }
});

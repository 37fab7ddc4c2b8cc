import { describe, expect, it } from 'vitest';
import { newOrganization, request, signIn, uniqueEmail } from './support';

async function whoami(token: string) {
  return (await request('GET', '/whoami', { token })).body;
}

describe('POST /invites', () => {
  it('invites a founder of a new organization, created at first sign-in', async () => {
    const admin = await newOrganization();
    const email = uniqueEmail('founder');

    const res = await request('POST', '/invites', { token: admin.token, body: { email } });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), email, role: 'admin', organization_id: expect.any(String) });
    const invitee = await whoami(await signIn(email));
    expect(invitee).toMatchObject({ kind: 'user', organization_id: res.body.organization_id, user: { email, role: 'admin' } });
    expect(invitee.organization_id).not.toBe((await whoami(admin.token)).organization_id);
  });

  it('invites a member into the caller organization', async () => {
    const admin = await newOrganization();
    const organizationId = (await whoami(admin.token)).organization_id;
    const email = uniqueEmail('member');

    const res = await request('POST', '/invites', { token: admin.token, body: { email, organization_id: organizationId } });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, role: 'member', organization_id: organizationId });
    expect(await whoami(await signIn(email))).toMatchObject({ organization_id: organizationId, user: { role: 'member' } });
  });

  it('matches the invited address without regard to case', async () => {
    const admin = await newOrganization();
    const email = uniqueEmail('MixedCase');

    await request('POST', '/invites', { token: admin.token, body: { email: email.toUpperCase() } });

    expect((await request('GET', '/whoami', { token: await signIn(email.toLowerCase()) })).status).toBe(200);
  });

  it('redeems an invite once even when the first requests race', async () => {
    const admin = await newOrganization();
    const email = uniqueEmail('racer');
    const invite = (await request('POST', '/invites', { token: admin.token, body: { email } })).body;
    const token = await signIn(email);

    const answers = await Promise.all(Array.from({ length: 8 }, () => request('GET', '/whoami', { token })));

    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body.organization_id))).toEqual(new Set([invite.organization_id]));
  });

  it('answers 403 admin_required for a member', async () => {
    const admin = await newOrganization();
    const organizationId = (await whoami(admin.token)).organization_id;
    const email = uniqueEmail('member');
    await request('POST', '/invites', { token: admin.token, body: { email, organization_id: organizationId } });
    const member = await signIn(email);

    const res = await request('POST', '/invites', { token: member, body: { email: uniqueEmail('x'), organization_id: organizationId } });

    expect(res.status).toBe(403);
    expect(res.body.code).toBe('admin_required');
  });

  it('answers 404 for an organization that is not the caller one', async () => {
    const admin = await newOrganization();
    const other = await newOrganization();
    const otherOrganization = (await whoami(other.token)).organization_id;

    const res = await request('POST', '/invites', {
      token: admin.token,
      body: { email: uniqueEmail('x'), organization_id: otherOrganization },
    });

    expect(res.status).toBe(404);
  });

  it.each([
    ['a bad email', { email: 'not-an-email' }, 'email'],
    ['a missing email', { role: 'admin' }, 'email'],
    ['an unknown role', { email: 'a@example.com', role: 'owner' }, 'role'],
    ['an unknown field', { email: 'a@example.com', colour: 'red' }, 'colour'],
  ])('answers 400 naming the field for %s', async (_case, body, field) => {
    const admin = await newOrganization();

    const res = await request('POST', '/invites', { token: admin.token, body });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain(field);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const admin = await newOrganization();

    const res = await request('POST', '/invites', { token: admin.token, rawBody: '{"email": ' });

    expect(res.status).toBe(400);
  });

  it('replays the same invite for the same Idempotency-Key and body, 409 for another body', async () => {
    const admin = await newOrganization();
    const email = uniqueEmail('idem');
    const headers = { 'idempotency-key': `invite-${email}` };
    const rawBody = JSON.stringify({ email });

    const first = await request('POST', '/invites', { token: admin.token, rawBody, headers });
    const again = await request('POST', '/invites', { token: admin.token, rawBody, headers });
    const different = await request('POST', '/invites', {
      token: admin.token,
      rawBody: JSON.stringify({ email, role: 'member' }),
      headers,
    });

    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(first.headers['idempotency-key']).toBe(headers['idempotency-key']);
    expect(different.status).toBe(409);
    expect(different.body.message).toBeTruthy();
  });

  it('answers 400 for an Idempotency-Key longer than 255 characters', async () => {
    const admin = await newOrganization();

    const res = await request('POST', '/invites', {
      token: admin.token,
      body: { email: uniqueEmail('x') },
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain('idempotency-key');
  });

  it('answers 401 for an API key and for no credential', async () => {
    const admin = await newOrganization();
    const key = (await request('POST', '/tokens', { token: admin.token, body: { name: 'k' } })).body.key;

    expect((await request('POST', '/invites', { token: key, body: { email: uniqueEmail('x') } })).status).toBe(401);
    expect((await request('POST', '/invites', { body: { email: uniqueEmail('x') } })).status).toBe(401);
  });
});

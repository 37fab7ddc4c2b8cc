import { acceptanceStore } from '#data/acceptance';
import { acceptanceStoreContract } from '../contracts/acceptance-store';
import { newOrganization, request } from './support';

acceptanceStoreContract('DynamoDB', async () => {
  const { token, organizationId } = await newOrganization();
  return {
    store: acceptanceStore(organizationId),
    addSecret: async (name) => {
      const created = await request('POST', '/secrets', { token, body: { name, value: 'contract-value' } });
      if (created.status !== 201) throw new Error(`POST /secrets answered ${created.status}`);
    },
  };
});

import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';

describe('smoke', () => {
  let api: TestApi;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());

  it('answers GET /v1/account with the global key', async () => {
    const account = await api.bootstrap();
    const response = await api.request('GET', '/v1/account', { token: account.globalApiKey.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.metadata.id, account.accountId);
  });
});

// PgLeaseProvider (actors/leases/pg-lease-provider.ts) while Postgres is away:
// a connect that fails rejects, and reports no lease loss (only an established
// session can be lost; a loss per failed connect was a warning per balancing round).
import assert from 'node:assert/strict';
import { PgLeaseProvider } from '../../actors/leases/pg-lease-provider';
import type { LeaseLoss } from '../../src/ports/leases';
import { freePort } from '../support/private-services';

describe('PgLeaseProvider without a server', () => {
  it('rejects a connect to a closed port without reporting a lease loss', async () => {
    const provider = new PgLeaseProvider({ url: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`, leaseTimeoutMs: 3000 });
    const losses: LeaseLoss[] = [];
    provider.onLost((loss) => losses.push(loss));
    for (let attempt = 0; attempt < 3; attempt++) await assert.rejects(provider.connect(), /ECONNREFUSED/);
    // The failed clients' 'end' and 'error' events come after the rejection.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(losses, []);
    assert.equal(provider.healthy, false);
    await provider.close();
  });
});

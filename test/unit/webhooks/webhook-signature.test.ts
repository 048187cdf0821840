import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { newWebhookSigningSecret } from '../../../src/accounts/account.service';
import { signWebhook, webhookHeaders, webhookSigningKey } from '../../../src/webhooks/webhook-signature';

/** Verifies with the standardwebhooks library as a receiver would, given the secret as `whsec_…`. */
function verifyAsReceiver(secret: string, body: string, headers: Record<string, string>): unknown {
  return new Webhook(`whsec_${secret.slice('wh_'.length)}`).verify(body, headers);
}

describe('webhook signature', () => {
  const body = JSON.stringify({ type: 'objective_event.finalized', timestamp: '2027-03-14T07:00:00Z', data: { status: 'OBJECTIVE_STATUS_COMPLETED' } });
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  describe('webhookSigningKey', () => {
    it('is the 32 bytes base64-encoded after wh_', () => {
      const bytes = Buffer.alloc(32, 7);
      assert.deepEqual(webhookSigningKey(`wh_${bytes.toString('base64')}`), bytes);
    });

    for (const [what, secret] of [
      ['a whsec_ secret', `whsec_${Buffer.alloc(32).toString('base64')}`],
      ['no prefix', Buffer.alloc(32).toString('base64')],
      ['base64url characters', `wh_${Buffer.alloc(32, 0xfb).toString('base64url')}`],
      ['missing padding', `wh_${Buffer.alloc(32).toString('base64').replace(/=+$/, '')}`],
      ['a space inside', `wh_${Buffer.alloc(32).toString('base64').replace(/^(.{8})/, '$1 ')}`],
    ]) {
      it(`refuses ${what} without repeating it`, () => {
        assert.throws(() => webhookSigningKey(secret), (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.equal(error.message, 'malformed webhook signing secret: expected wh_ followed by base64');
          return true;
        });
      });
    }

    it('refuses a key shorter than the 24 bytes Standard Webhooks requires', () => {
      assert.throws(() => webhookSigningKey(`wh_${Buffer.alloc(16).toString('base64')}`), { message: 'malformed webhook signing secret: its key is 16 bytes, expected 24 to 64' });
    });
  });

  describe('signWebhook', () => {
    it('signs "{id}.{timestamp}.{body}" so the standardwebhooks library verifies it with whsec_ and with the raw key', () => {
      const secret = newWebhookSigningSecret();
      const headers = webhookHeaders({ id: 'whdel_01J0000000000000000000000', timestampSeconds: nowSeconds(), body, secrets: [secret] });
      assert.deepEqual(verifyAsReceiver(secret, body, headers), JSON.parse(body));
      assert.deepEqual(new Webhook(webhookSigningKey(secret), { format: 'raw' }).verify(body, headers), JSON.parse(body));
    });

    it('produces the value the standardwebhooks library computes', () => {
      const secret = newWebhookSigningSecret();
      const at = new Date('2027-03-14T07:00:00Z');
      const expected = new Webhook(`whsec_${secret.slice(3)}`).sign('whdel_1', at, body);
      assert.equal(signWebhook({ id: 'whdel_1', timestampSeconds: at.getTime() / 1000, body, secrets: [secret] }), expected);
    });

    it('carries one signature per secret, current first, and either secret verifies while a third does not', () => {
      const current = newWebhookSigningSecret();
      const previous = newWebhookSigningSecret();
      const headers = webhookHeaders({ id: 'whdel_2', timestampSeconds: nowSeconds(), body, secrets: [current, previous] });
      const [first, second, ...rest] = headers['webhook-signature'].split(' ');
      assert.equal(rest.length, 0);
      assert.equal(first, signWebhook({ id: 'whdel_2', timestampSeconds: Number(headers['webhook-timestamp']), body, secrets: [current] }));
      assert.match(second, /^v1,[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(verifyAsReceiver(current, body, headers), JSON.parse(body));
      assert.deepEqual(verifyAsReceiver(previous, body, headers), JSON.parse(body));
      assert.throws(() => verifyAsReceiver(newWebhookSigningSecret(), body, headers), { message: 'No matching signature found' });
    });

    it('fails verification once a byte of the body changes', () => {
      const secret = newWebhookSigningSecret();
      const headers = webhookHeaders({ id: 'whdel_3', timestampSeconds: nowSeconds(), body, secrets: [secret] });
      assert.throws(() => verifyAsReceiver(secret, body.replace('COMPLETED', 'FAILED'), headers), { message: 'No matching signature found' });
    });

    it('refuses to sign without a secret, with a "." in the id or with a timestamp that is not whole seconds', () => {
      const secret = newWebhookSigningSecret();
      assert.throws(() => signWebhook({ id: 'whdel_4', timestampSeconds: nowSeconds(), body, secrets: [] }), { message: 'a webhook needs at least one signing secret' });
      assert.throws(() => signWebhook({ id: 'whdel.4', timestampSeconds: nowSeconds(), body, secrets: [secret] }), { message: 'a webhook id must be non-empty and hold no "."' });
      for (const timestampSeconds of [1_800_000_000.5, 1_800_000_000_123, -1]) {
        assert.throws(() => signWebhook({ id: 'whdel_4', timestampSeconds, body, secrets: [secret] }), { message: 'a webhook timestamp must be whole unix seconds' }, String(timestampSeconds));
      }
    });
  });

  describe('webhookHeaders', () => {
    it('sends the id, the timestamp in seconds, the signature and a JSON content type', () => {
      const secret = newWebhookSigningSecret();
      const headers = webhookHeaders({ id: 'whdel_5', timestampSeconds: 1_800_000_000, body, secrets: [secret] });
      assert.deepEqual(Object.keys(headers).sort(), ['content-type', 'webhook-id', 'webhook-signature', 'webhook-timestamp']);
      assert.equal(headers['content-type'], 'application/json');
      assert.equal(headers['webhook-id'], 'whdel_5');
      assert.equal(headers['webhook-timestamp'], '1800000000');
    });
  });
});

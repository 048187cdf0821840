// A receiver of agentrt's webhooks (docs/api.md, "Webhooks"): it verifies each
// delivery's signature over the raw body, answers at once, and handles an
// event once even when its delivery comes again (same webhook-id).
//   npm install standardwebhooks
//   AGENTRT_WEBHOOK_SECRET=wh_... node webhook-receiver.mjs
// The secret is the account's info.webhookEventsHmacSecret (GET /v1/account);
// PORT (default 3000) is where it listens.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.AGENTRT_WEBHOOK_SECRET ?? '';
if (!secret.startsWith('wh_')) {
  console.error("Set AGENTRT_WEBHOOK_SECRET to the account's webhookEventsHmacSecret (wh_...).");
  process.exit(1);
}
// "wh_..." → "whsec_...": the same key, as every Standard Webhooks library reads it.
const webhook = new Webhook(secret.replace(/^wh_/, 'whsec_'));
const seen = new Set(); // use a store with a TTL in production

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let event;
    try {
      event = webhook.verify(Buffer.concat(chunks), request.headers); // throws on a bad signature or a timestamp off by > 5 min
    } catch {
      response.writeHead(400).end();
      return;
    }
    response.writeHead(204).end(); // answer fast; work off the request
    if (seen.has(request.headers['webhook-id'])) return;
    seen.add(request.headers['webhook-id']);
    console.log(event.type, event.data.objective.id, event.data.objectiveEvent.sequence);
  });
});
server.listen(Number(process.env.PORT ?? 3000), () => console.log(`listening on port ${server.address().port}`));

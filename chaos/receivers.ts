// The webhook receivers of the chaos run, as customers would write them: each
// verifies every request with the `standardwebhooks` package and records its
// webhook-id, objective, event and sequence. One real HTTP server (the tests'
// receiver) with a path per behaviour: healthy, slow (answers after a few
// seconds), failing (503 while its window is open, then 200) and gone (410).
import { Webhook } from 'standardwebhooks';
import { startWebhookReceiver, type ReceiverAnswer, type WebhookReceiver } from '../test/support/webhook-receiver';

export type ReceiverKind = 'healthy' | 'slow' | 'failing' | 'gone';
export const RECEIVER_KINDS: ReceiverKind[] = ['healthy', 'slow', 'failing', 'gone'];

export interface Receipt {
  kind: ReceiverKind;
  webhookId: string;
  receivedAt: number;
  /** The status this receiver answered. */
  status: number;
  verified: boolean;
  error?: string;
  agentId?: string;
  objectiveId?: string;
  eventId?: string;
  sequence?: number;
}

export interface ChaosReceivers {
  url(kind: ReceiverKind): string;
  receipts: Receipt[];
  /** Opens or closes the failing receiver's outage. */
  setFailing(failing: boolean): void;
  /** The time the gone receiver first answered 410 (undefined before). */
  firstGoneAt(): number | undefined;
  close(): Promise<void>;
}

interface Envelope {
  data?: { agent?: { id?: string }; objective?: { id?: string }; objectiveEvent?: { sequence?: number; metadata?: { id?: string } } };
}

/**
 * @param signingSecret the account's `webhookEventsHmacSecret` (`wh_…`), read once the nodes run
 * @param slowMs how long the slow receiver takes to answer
 */
export async function startChaosReceivers(slowMs: number): Promise<{ receivers: ChaosReceivers; setSecret(secret: string): void }> {
  const server: WebhookReceiver = await startWebhookReceiver();
  const receipts: Receipt[] = [];
  let verifier: Webhook | null = null;
  let failing = false;
  let goneAt: number | undefined;

  const answers: Record<ReceiverKind, () => ReceiverAnswer> = {
    healthy: () => ({ status: 204 }),
    slow: () => ({ status: 200, body: 'ok', delayMs: slowMs }),
    failing: () => (failing ? { status: 503, body: 'down for maintenance' } : { status: 200, body: 'ok' }),
    gone: () => ({ status: 410, body: 'gone' }),
  };

  for (const kind of RECEIVER_KINDS) {
    server.answer(`/${kind}`, (webhook) => {
      const receipt: Receipt = { kind, webhookId: webhook.id, receivedAt: webhook.receivedAt, status: 0, verified: false };
      try {
        if (!verifier) throw new Error('no signing secret yet');
        const body = verifier.verify(webhook.body, webhook.headers) as Envelope;
        receipt.verified = true;
        receipt.agentId = body.data?.agent?.id;
        receipt.objectiveId = body.data?.objective?.id;
        receipt.eventId = body.data?.objectiveEvent?.metadata?.id;
        receipt.sequence = body.data?.objectiveEvent?.sequence;
      } catch (error) {
        receipt.error = (error as Error).message;
      }
      // A request that does not verify is refused, as a real receiver would.
      const answer = receipt.verified ? answers[kind]() : { status: 401, body: 'bad signature' };
      receipt.status = answer.status;
      if (kind === 'gone' && answer.status === 410) goneAt ??= Date.now();
      receipts.push(receipt);
      return answer;
    });
  }

  return {
    setSecret(secret) {
      verifier = new Webhook(secret.replace(/^wh_/, 'whsec_'));
    },
    receivers: {
      url: (kind) => `${server.url}/${kind}`,
      receipts,
      setFailing(value) {
        failing = value;
      },
      firstGoneAt: () => goneAt,
      close: () => server.close(),
    },
  };
}

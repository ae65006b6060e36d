import http from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** What a receiver did with one delivery, and the status it answers with. */
export type Receipt =
  | { readonly outcome: 'accepted'; readonly status: 200; readonly event: WebhookEvent }
  | { readonly outcome: 'duplicate'; readonly status: 200; readonly id: string }
  | { readonly outcome: 'rejected'; readonly status: 400; readonly reason: string };

export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

/** Where the ids already handled are kept: in production a table with a unique key, written with the effect. */
export interface SeenIds {
  has(id: string): boolean;
  add(id: string): void;
}

/**
 * The consumer's half of exactly-once: delivery is at least once, so every delivery is verified
 * (Standard Webhooks: the signature over id, timestamp and body, with a 5-minute tolerance against
 * replays) and handled only if its `webhook-id` was never seen. A duplicate still gets a 2xx, or the
 * service would keep retrying it. Events may arrive out of order: act on `data.estado` and
 * `timestamp`, never on arrival order.
 *
 * @example
 *   const receiver = new WebhookReceiver(process.env.WEBHOOK_SECRET!, new Set(), (event) => shipOrder(event.data));
 *   http.createServer(receiver.listener()).listen(8080);
 */
export class WebhookReceiver {
  private readonly webhook: Webhook;

  constructor(secret: string, private readonly seen: SeenIds, private readonly onEvent: (event: WebhookEvent) => void) {
    this.webhook = new Webhook(secret);
  }

  handle(headers: Readonly<Record<string, string | undefined>>, body: string): Receipt {
    let event: WebhookEvent;
    try {
      event = this.webhook.verify(body, {
        'webhook-id': headers['webhook-id'] ?? '',
        'webhook-timestamp': headers['webhook-timestamp'] ?? '',
        'webhook-signature': headers['webhook-signature'] ?? '',
      }) as WebhookEvent;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return { outcome: 'rejected', status: 400, reason: error.message };
    }
    const id = headers['webhook-id']!;
    if (this.seen.has(id)) return { outcome: 'duplicate', status: 200, id };
    this.onEvent(event);
    this.seen.add(id);
    return { outcome: 'accepted', status: 200, event };
  }

  /** A node:http listener: reads the body as sent (the signature covers its exact bytes) and answers at once. */
  listener(): http.RequestListener {
    return (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value]));
        const receipt = this.handle(headers, Buffer.concat(chunks).toString('utf8'));
        console.log(receipt.outcome === 'accepted' ? `accepted ${receipt.event.id} ${receipt.event.type}` : receipt.outcome === 'duplicate' ? `duplicate ${receipt.id} dropped` : `rejected: ${receipt.reason}`);
        response.writeHead(receipt.status).end();
      });
    };
  }
}

import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  readonly id: string;
  /** The request's path: which endpoint (several can share one consumer, e.g. `/webhooks/<merchant>`). */
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** What the consumer answered (undefined: it never did). */
  readonly status: number | undefined;
}

/** What the consumer does with the next request: answer a status, or hang (never answer). */
export type Behaviour = number | 'hang';

/**
 * A real webhook consumer on a loopback port: records every request, answers as the test says
 * (`next` queues one-off behaviours, then `otherwise`), and can go down and come back on its port.
 */
export class WebhookConsumer {
  readonly received: ReceivedWebhook[] = [];
  readonly next: Behaviour[] = [];
  otherwise: Behaviour = 200;
  private server: http.Server | undefined;
  private port = 0;
  private readonly hanging = new Set<http.ServerResponse>();

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const behaviour = this.next.shift() ?? this.otherwise;
        const status = behaviour === 'hang' ? undefined : behaviour;
        this.received.push({ id: String(request.headers['webhook-id']), path: request.url ?? '/', headers: request.headers, body, status });
        if (status === undefined) return void this.hanging.add(response);
        response.writeHead(status).end();
      });
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Down: the port refuses connections until `start()` again. */
  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Requests acknowledged with a 2xx, per webhook-id. */
  acknowledgedIds(): string[] {
    return this.received.filter((entry) => entry.status !== undefined && entry.status < 300).map((entry) => entry.id);
  }

  /** Verifies a request's signature with the Standard Webhooks library; returns the payload or throws. */
  static verify(secret: string, received: ReceivedWebhook): unknown {
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(received.headers[name])]));
    return new Webhook(secret).verify(received.body, headers);
  }
}

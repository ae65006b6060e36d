import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** Names the replica that answered; nginx's `$upstream_addr`, as a header the tests can read. */
export const UPSTREAM_HEADER = 'x-upstream';

/**
 * A loopback HTTP reverse proxy standing in for deploy/nginx.conf: each request goes to the next
 * replica in turn (nginx's default round robin is per request, not per connection). A replica that
 * cannot be reached gets the request passed on to the next one, which is safe for a POST because
 * nothing was sent; any other failure is a 502, as in nginx.
 */
export class RoundRobinProxy {
  private next = 0;
  /** How many requests each replica answered, by its base URL. */
  readonly served = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    private readonly replicas: readonly URL[],
    readonly baseUrl: string,
  ) {}

  static async start(replicaBaseUrls: readonly string[]): Promise<RoundRobinProxy> {
    let proxy: RoundRobinProxy | undefined;
    const server = createServer(async (incoming, outgoing) => {
      // Buffered (bodies are at most 64 kB) so that a request can be passed on to another replica.
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      proxy!.forward(incoming, Buffer.concat(chunks), outgoing, replicaBaseUrls.length);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    proxy = new RoundRobinProxy(server, replicaBaseUrls.map((url) => new URL(url)), `http://127.0.0.1:${port}`);
    return proxy;
  }

  /** The base URL of the replica the next request goes to. */
  nextReplica(): string {
    return this.replicas[this.next % this.replicas.length]!.origin;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, attemptsLeft: number): void {
    const replica = this.replicas[this.next++ % this.replicas.length]!;
    const upstream = request({
      // A fresh connection per request: a replica killed by a test is then refused, never a stale socket.
      agent: false,
      host: replica.hostname,
      port: replica.port,
      method: incoming.method,
      path: incoming.url,
      headers: { ...withoutHopByHop(incoming.headers), 'x-forwarded-for': incoming.socket.remoteAddress },
    });
    upstream.on('response', (answer) => {
      this.served.set(replica.origin, (this.served.get(replica.origin) ?? 0) + 1);
      outgoing.writeHead(answer.statusCode!, { ...withoutHopByHop(answer.headers), [UPSTREAM_HEADER]: replica.origin });
      answer.pipe(outgoing);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && attemptsLeft > 1) return this.forward(incoming, body, outgoing, attemptsLeft - 1);
      if (!outgoing.headersSent) outgoing.writeHead(502).end();
      else outgoing.destroy();
    });
    upstream.end(body);
  }
}

// Each side of the proxy keeps its own connection and framing.
function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { connection: _connection, 'keep-alive': _keepAlive, 'transfer-encoding': _encoding, ...endToEnd } = headers;
  return endToEnd;
}

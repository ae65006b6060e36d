import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback proxy in front of PostgreSQL that counts round trips on the wire, per connection's
 * `application_name` (read from its startup message): a round trip begins each time the client
 * sends after the server last spoke. Statements pipelined behind one another, sent before any answer
 * came back, share one. What the database itself sees, whatever the driver does.
 */
export class RoundTripProxy {
  private readonly counts = new Map<string, number>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly databaseUrl: string,
  ) {}

  static async inFrontOf(databaseUrl: string): Promise<RoundTripProxy> {
    const target = new URL(databaseUrl);
    let proxy: RoundTripProxy | undefined;
    const server = createServer((client) => proxy!.forward(client, target.hostname, Number(target.port || 5432)));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const viaProxy = new URL(databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String((server.address() as { port: number }).port);
    proxy = new RoundTripProxy(server, viaProxy.toString());
    return proxy;
  }

  /** Round trips so far of the connections named `applicationName`. */
  roundTrips(applicationName: string): number {
    return this.counts.get(applicationName) ?? 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.sockets.delete(socket));
    }
    let applicationName: string | undefined;
    let serverSpokeLast = true;
    client.on('data', (chunk: Buffer) => {
      applicationName ??= applicationNameOf(chunk);
      if (serverSpokeLast) this.counts.set(applicationName, this.roundTrips(applicationName) + 1);
      serverSpokeLast = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      serverSpokeLast = true;
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}

/** The startup message: length, protocol version, then `name\0value\0` pairs ending in `\0`. */
function applicationNameOf(startup: Buffer): string {
  const pairs = startup.subarray(8).toString('utf8').split('\0');
  const at = pairs.indexOf('application_name');
  return at >= 0 ? pairs[at + 1]! : '';
}

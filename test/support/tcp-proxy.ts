import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy the test controls: `cut()` drops every live connection and refuses new ones,
 * as a database host that went away; `restore()` accepts connections again on the same port.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await proxy.restore();
    return proxy;
  }

  /** A proxy to the PostgreSQL server of `databaseUrl`, and the same URL routed through it. */
  static async inFrontOf(databaseUrl: string): Promise<{ proxy: TcpProxy; viaProxy: string }> {
    const direct = new URL(databaseUrl);
    const proxy = await TcpProxy.start(direct.hostname, Number(direct.port || 5432));
    const viaProxy = new URL(databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    return { proxy, viaProxy: viaProxy.toString() };
  }

  /** True between `cut()` and `restore()`: what an `afterEach` checks to leave the database reachable. */
  get isCut(): boolean {
    return this.server === undefined;
  }

  async restore(): Promise<void> {
    const server = createServer((client) => this.forward(client));
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private forward(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}

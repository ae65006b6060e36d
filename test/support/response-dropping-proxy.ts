import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of the service that, for the connections `shouldDrop` picks, lets
 * the request through and then cuts the client off the moment the service's answer arrives: the
 * service has done the work and answered, the client never reads it (the lost-response incident).
 */
export class ResponseDroppingProxy {
  private readonly sockets = new Set<Socket>();
  dropped = 0;
  forwarded = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, shouldDrop: () => boolean): Promise<ResponseDroppingProxy> {
    let proxy: ResponseDroppingProxy | undefined;
    const server = createServer((client) => proxy!.handle(client, targetPort, shouldDrop()));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    proxy = new ResponseDroppingProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(client: Socket, targetPort: number, drop: boolean): void {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.sockets.delete(socket));
    }
    client.pipe(upstream);
    upstream.once('data', () => (drop ? this.dropped++ : this.forwarded++));
    if (drop) {
      upstream.once('data', () => {
        client.destroy();
        upstream.destroy();
      });
    } else {
      upstream.pipe(client);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}

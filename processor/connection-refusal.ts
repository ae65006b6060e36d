import type { Server } from 'node:http';

/**
 * Makes the processor unreachable for a while, as a crashed or restarting process is: the listening
 * socket is closed and open connections destroyed (new connections get ECONNREFUSED), then it
 * listens again on the same host and port.
 */
export class ConnectionRefusal {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly server: Server,
    private readonly host: string,
    private readonly port: number,
    private readonly log: (line: string) => void,
  ) {}

  refuseFor(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    if (this.server.listening) this.server.close();
    this.server.closeAllConnections();
    this.timer = setTimeout(() => this.listenAgain(), ms);
  }

  /** For close(): no listening again after the processor is closed. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private listenAgain(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const onError = (error: Error) => this.log(`could not listen again on ${this.host}:${this.port}: ${error.message}`);
    this.server.once('error', onError);
    this.server.listen(this.port, this.host, () => this.server.off('error', onError));
  }
}

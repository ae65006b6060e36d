import type { IncomingMessage, Server, ServerResponse } from 'node:http';

// The bench's own reading of the counters is not part of what it measures.
const COUNTERS_PATH = '/bench/counters';

/**
 * Requests the watched servers received, and those they have not answered yet. A request counts as
 * answered when its handler ends the response, whether or not the client is still there: the load
 * generator drops the connections of requests still in flight when it stops, and the server goes on
 * charging them, so a reading taken before they end would count their work for nobody.
 */
export class RequestTally {
  private receivedCount = 0;
  private unansweredCount = 0;

  watch(server: Server): void {
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
      if (request.url === COUNTERS_PATH) return;
      this.receivedCount++;
      this.unansweredCount++;
      const end = response.end;
      response.end = ((...args: Parameters<typeof end>) => {
        this.unansweredCount--;
        response.end = end;
        return end.apply(response, args);
      }) as typeof end;
    });
  }

  get received(): number {
    return this.receivedCount;
  }

  get unanswered(): number {
    return this.unansweredCount;
  }
}

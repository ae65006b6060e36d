/** The body of `POST /pagos`: what the user asked to pay. */
export interface PagoRequest {
  readonly numeroOrden: string;
  /** Minor units (cents). */
  readonly monto: number;
  readonly moneda: string;
  /** The payment-method token from the processor's SDK. */
  readonly token: string;
}

/** One HTTP answer, its body kept exactly as received. */
export interface PagosAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly json: unknown;
}

/** The slice of the global `fetch` the client uses; tests pass one that counts or diverts requests. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface PagosClientOptions {
  readonly baseUrl: string;
  readonly apiToken: string;
  /** How long one attempt may take before the client stops waiting for its answer. */
  readonly timeoutMs: number;
  /**
   * How long the service may hold an attempt whose key is still running elsewhere, to answer it with
   * that request's result (`Prefer: wait`). Default 10; always a second under `timeoutMs`, so the
   * answer arrives before the client gives up; 0 asks for an immediate 409.
   */
  readonly waitSeconds?: number;
  readonly fetch?: FetchLike;
}

/** The server's default upper bound (IDEMPOTENCY_MAX_WAIT_SECONDS): asking for more gains nothing. */
export const PREFERRED_WAIT_SECONDS = 10;

/**
 * One attempt at `POST /pagos` with the operation's Idempotency-Key, or one read of a payment.
 * Rejects only when no answer arrived (network error, timeout); every HTTP status resolves.
 *
 * @example
 * const answer = await new PagosClient({ baseUrl, apiToken, timeoutMs: 15_000 }).postPago(key, pago); // sends Prefer: wait=10
 */
export class PagosClient {
  private readonly fetch: FetchLike;
  private readonly waitSeconds: number;

  constructor(private readonly options: PagosClientOptions) {
    this.fetch = options.fetch ?? fetch;
    this.waitSeconds = Math.max(0, Math.min(options.waitSeconds ?? PREFERRED_WAIT_SECONDS, Math.floor(options.timeoutMs / 1000) - 1));
  }

  async postPago(idempotencyKey: string, pago: PagoRequest): Promise<PagosAnswer> {
    const response = await this.fetch(new URL('/pagos', this.options.baseUrl).toString(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.options.apiToken}`,
        'idempotency-key': idempotencyKey,
        'content-type': 'application/json',
        ...(this.waitSeconds > 0 && { prefer: `wait=${this.waitSeconds}` }),
      },
      body: JSON.stringify(pago),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    return answerOf(response);
  }

  /**
   * `GET /pagos/{id}` with `Prefer: wait=N` (N > 0): a service that supports it holds the request until
   * the payment leaves `PENDIENTE`/`REQUIERE_AUTENTICACION` or N s pass; one that does not answers at once.
   * The attempt may take N s, so its timeout is N s more than the client's own.
   */
  async getPago(id: string, waitSeconds: number): Promise<PagosAnswer> {
    const response = await this.fetch(new URL(`/pagos/${encodeURIComponent(id)}`, this.options.baseUrl).toString(), {
      method: 'GET',
      headers: { authorization: `Bearer ${this.options.apiToken}`, ...(waitSeconds > 0 && { prefer: `wait=${waitSeconds}` }) },
      signal: AbortSignal.timeout(this.options.timeoutMs + waitSeconds * 1000),
    });
    return answerOf(response);
  }
}

async function answerOf(response: Response): Promise<PagosAnswer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: parseJson(text) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The soak's history: one JSON object per line, written as the run goes (operations and faults) and
 * at its end (what the processor, the service, the feed and the webhook consumer hold). The checker
 * (`checker.ts`) reads nothing else.
 */

/** A client operation sent (each attempt of a retried operation is an operation of its own). */
export interface Invoke {
  readonly t: 'invoke';
  readonly op: number;
  readonly client: number;
  readonly at: number;
  readonly method: 'POST' | 'GET';
  readonly path: string;
  /** The Idempotency-Key of a POST. */
  readonly key?: string;
  readonly body?: unknown;
}

/** The answer an operation got. */
export interface Complete {
  readonly t: 'complete';
  readonly op: number;
  readonly at: number;
  readonly status: number;
  readonly replayed: boolean;
  /** The body exactly as it arrived. */
  readonly body: string;
}

/** An operation that got no answer: the connection dropped, a timeout, the client gave up. */
export interface Lost {
  readonly t: 'lost';
  readonly op: number;
  readonly at: number;
  readonly reason: string;
}

export interface Fault {
  readonly t: 'fault';
  readonly at: number;
  readonly kind: string;
  readonly detail?: string;
}

/** The run's parameters; `webhookSecrets` holds each merchant's endpoint secret, for checking signatures. */
export interface Setup {
  readonly t: 'setup';
  readonly seed: number;
  readonly clients: number;
  readonly durationMs: number;
  readonly webhookSecrets: Readonly<Record<string, string>>;
}

/** A PaymentIntent at the processor at the end, `charged` when it has a charge. */
export interface ProcessorIntent {
  readonly t: 'intent';
  readonly id: string;
  readonly pagoId: string | null;
  readonly amount: number;
  readonly status: string;
  readonly charged: boolean;
  readonly amountRefunded: number;
}

export interface ProcessorRefund {
  readonly t: 'processor-refund';
  readonly id: string;
  readonly paymentIntent: string;
  readonly reembolsoId: string | null;
  readonly amount: number;
  readonly status: string;
}

/** A payment as the service shows it at the end (`GET /pagos?numeroOrden=`). */
export interface Pago {
  readonly t: 'pago';
  readonly id: string;
  readonly numeroOrden: string;
  readonly monto: number;
  readonly estado: string;
  readonly montoReembolsado: number;
}

export interface Reembolso {
  readonly t: 'reembolso';
  readonly id: string;
  readonly pagoId: string;
  readonly monto: number;
  readonly estado: string;
}

/** One entry of a merchant's `GET /eventos`, in the order the feed listed them. */
export interface FeedEvent {
  readonly t: 'evento';
  readonly merchant: string;
  readonly id: string;
  readonly type: string;
  readonly dataId: string;
}

/** One request the webhook consumer received at a merchant's endpoint, and what it answered. */
export interface Delivery {
  readonly t: 'delivery';
  readonly merchant: string;
  readonly webhookId: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
  readonly status: number;
}

export type HistoryRecord = Invoke | Complete | Lost | Fault | Setup | ProcessorIntent | ProcessorRefund | Pago | Reembolso | FeedEvent | Delivery;

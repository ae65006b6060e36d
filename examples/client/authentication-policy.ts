/**
 * What the client decides about a payment that waits for its customer's 3-D Secure: what the `202`
 * hands over, and when to ask `GET /pagos/{id}` again. Pure: answers, elapsed times and the clock's
 * readings come in as values, so every decision is tested without a network.
 */

/** What a `202 REQUIERE_AUTENTICACION` carries for the app. */
export interface Authentication {
  readonly pagoId: string;
  /** For Stripe's SDK (`handleNextAction`); not a credential of this API, never logged by a real app. */
  readonly clientSecret: string;
  /** The PaymentIntent's id: the client secret's part before `_secret_`. */
  readonly intentId: string;
  /** After this the service cancels the attempt: `RECHAZADO`, `motivo: autenticacion-abandonada`. */
  readonly expiraEn: string;
}

/** The answer's status and parsed body, as `PagosClient` returns them. */
export interface AnswerLike {
  readonly status: number;
  readonly json?: unknown;
}

// States whose outcome is still to come (the service's ESTADOS_EN_CURSO); any other is final.
const UNDECIDED = new Set(['PENDIENTE', 'REQUIERE_AUTENTICACION']);

/** The longest `Prefer: wait` asked for; the service grants up to 60 s, a shorter hold survives proxies' idle timeouts. */
export const PREFERRED_OUTCOME_WAIT_SECONDS = 10;

/** An answer quicker than this while the payment is undecided means the service did not hold it: pause up to this. */
export const MIN_POLL_INTERVAL_MS = 1_000;

/** The authentication a `202` asks for; undefined for any other answer. */
export function authenticationOf(answer: AnswerLike): Authentication | undefined {
  if (answer.status !== 202) return undefined;
  const pago = answer.json as { id?: unknown; estado?: unknown; autenticacion?: { clientSecret?: unknown; expiraEn?: unknown } } | undefined;
  const clientSecret = pago?.autenticacion?.clientSecret;
  if (pago?.estado !== 'REQUIERE_AUTENTICACION' || typeof pago.id !== 'string' || typeof clientSecret !== 'string') return undefined;
  const intentId = intentIdOf(clientSecret);
  if (intentId === undefined) return undefined;
  return { pagoId: pago.id, clientSecret, intentId, expiraEn: String(pago.autenticacion?.expiraEn) };
}

/** `pi_123_secret_abc` → `pi_123`; undefined when it is not a client secret. */
export function intentIdOf(clientSecret: string): string | undefined {
  const cut = clientSecret.indexOf('_secret_');
  return cut > 0 ? clientSecret.slice(0, cut) : undefined;
}

/** True once the payment left `PENDIENTE` and `REQUIERE_AUTENTICACION`: `APROBADO`, `RECHAZADO` or `FALLIDO`. */
export function isDecided(estado: string): boolean {
  return !UNDECIDED.has(estado);
}

/** One `GET /pagos/{id}`'s answer, read: the payment's state, an answer worth asking again, or a refusal that won't change. */
export type PagoReading =
  | { readonly kind: 'estado'; readonly estado: string; readonly motivo?: string }
  | { readonly kind: 'transient' }
  | { readonly kind: 'refused'; readonly status: number };

/** No answer (undefined), 429 and 5xx are worth asking again; other 4xx (401, 404) are not. */
export function readPagoAnswer(answer: AnswerLike | undefined): PagoReading {
  if (answer === undefined || answer.status === 429 || answer.status >= 500) return { kind: 'transient' };
  const pago = answer.json as { estado?: unknown; motivo?: unknown } | undefined;
  if (answer.status !== 200 || typeof pago?.estado !== 'string') return { kind: 'refused', status: answer.status };
  return { kind: 'estado', estado: pago.estado, ...(typeof pago.motivo === 'string' && { motivo: pago.motivo }) };
}

export type WaitStep =
  | { readonly done: true; readonly reason: 'decided' | 'refused' | 'deadline' }
  | { readonly done: false; readonly pauseMs: number };

/**
 * After one `GET /pagos/{id}` that answered `reading` in `answeredInMs`, with `remainingMs` left
 * before the client gives up: stop, or pause `pauseMs` and ask again. A service that held the request
 * (`Prefer: wait`) answers after a while or at the change, and is asked again at once; one that
 * answered at once (a service without the preference, an error) is asked again after about a second.
 */
export function nextWaitStep(reading: PagoReading, answeredInMs: number, remainingMs: number): WaitStep {
  if (reading.kind === 'estado' && isDecided(reading.estado)) return { done: true, reason: 'decided' };
  if (reading.kind === 'refused') return { done: true, reason: 'refused' };
  if (remainingMs <= 0) return { done: true, reason: 'deadline' };
  return { done: false, pauseMs: Math.min(remainingMs, Math.max(0, MIN_POLL_INTERVAL_MS - answeredInMs)) };
}

/** The `Prefer: wait=N` for a request with `remainingMs` left: at most the preferred 10 s, at least 1. */
export function preferWaitSeconds(remainingMs: number): number {
  return Math.max(1, Math.min(PREFERRED_OUTCOME_WAIT_SECONDS, Math.ceil(remainingMs / 1000)));
}

export const PROCESSOR_EVENT_VERIFIER = Symbol('PROCESSOR_EVENT_VERIFIER');

/**
 * What the processor told us happened after it answered (a webhook), reduced to what deciding needs:
 * which object it is about. Its contents are never trusted for state: handlers retrieve the object
 * (the processor does not guarantee order, so only its current state can't be stale).
 */
export interface ProcessorEvent {
  /** The processor's event id (`evt_…`): the same event redelivered has the same id. */
  readonly id: string;
  /** e.g. `payment_intent.succeeded`, `refund.failed`. */
  readonly type: string;
  /** The id of the object the event is about (`pi_…`, `re_…`). */
  readonly objectId: string;
}

/** The signature did not verify (wrong secret, altered body, stale timestamp), or the body is not an event. */
export class ProcessorEventRejectedError extends Error {
  override readonly name = 'ProcessorEventRejectedError';
}

/** Checks a webhook's signature over its exact bytes, and reads the event it carries. */
export interface ProcessorEventVerifier {
  /** Throws {@link ProcessorEventRejectedError}; never echoes the body or the secret. */
  verify(rawBody: Buffer, signatureHeader: string | undefined): ProcessorEvent;
}

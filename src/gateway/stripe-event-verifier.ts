import Stripe from 'stripe';
import { type ProcessorEvent, ProcessorEventRejectedError, type ProcessorEventVerifier } from './processor-events.js';

// Stripe's own default: a replayed capture older than five minutes is refused.
const TOLERANCE_SECONDS = 300;

/** Stripe's signed webhooks (`Stripe-Signature: t=…,v1=…`), verified by the official SDK with the endpoint's `whsec_…` secret. */
export class StripeEventVerifier implements ProcessorEventVerifier {
  constructor(private readonly secret: string) {}

  verify(rawBody: Buffer, signatureHeader: string | undefined): ProcessorEvent {
    if (!signatureHeader) throw new ProcessorEventRejectedError('the Stripe-Signature header is missing');
    let event: Stripe.Event;
    try {
      event = Stripe.webhooks.constructEvent(rawBody, signatureHeader, this.secret, TOLERANCE_SECONDS);
    } catch (error) {
      // The SDK's messages say what failed (no match, timestamp outside tolerance) and quote neither body nor secret.
      if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new ProcessorEventRejectedError(firstSentence(error.message));
      throw new ProcessorEventRejectedError('the body is not JSON');
    }
    return eventOf(event);
  }
}

function eventOf(event: Stripe.Event): ProcessorEvent {
  const object = (event as { data?: { object?: { id?: unknown } } }).data?.object;
  if (typeof event.id !== 'string' || typeof event.type !== 'string' || typeof object?.id !== 'string') {
    throw new ProcessorEventRejectedError('the body is not a Stripe event (it needs id, type and data.object.id)');
  }
  return { id: event.id, type: event.type, objectId: object.id };
}

function firstSentence(message: string): string {
  return message.split(/(?<=\.)\s/)[0] ?? message;
}

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Delivery } from './history.js';
import { type HistoryState, parse } from './history-state.js';
import type { Count, Report } from './checker.js';

const SETTLED_EVENT: Record<string, string> = { APROBADO: 'aprobado', RECHAZADO: 'rechazado', FALLIDO: 'fallido' };
// Types that one resource may legitimately have twice (a FALLIDO payment retried may fail again).
const REPEATABLE_TYPES = new Set(['pago.fallido', 'pago.requiere_autenticacion']);

export function checkEvents(state: HistoryState, count: Count, report: Report): void {
  const seen = new Set<string>();
  const idsByResource = new Map<string, string[]>();
  for (const event of state.feed) {
    count('feed-no-duplicates');
    if (seen.has(event.id)) report('feed-no-duplicates', `event ${event.id} (${event.type} of ${event.dataId}) is in the feed twice`);
    seen.add(event.id);
    const resource = `${event.type} ${event.dataId}`;
    idsByResource.set(resource, [...new Set([...(idsByResource.get(resource) ?? []), event.id])]);
  }
  const settled = [
    ...[...state.pagos.values()].map((pago) => ({ type: `pago.${SETTLED_EVENT[pago.estado]}`, id: pago.id, estado: pago.estado })),
    ...state.reembolsos.map((reembolso) => ({ type: `reembolso.${SETTLED_EVENT[reembolso.estado]}`, id: reembolso.id, estado: reembolso.estado })),
  ].filter((each) => !each.type.endsWith('undefined'));
  for (const { type, id, estado } of settled) {
    count('event-per-settlement');
    const ids = idsByResource.get(`${type} ${id}`) ?? [];
    if (ids.length === 0) report('event-per-settlement', `${id} is ${estado} but the feed has no ${type} for it`);
  }
  for (const [resource, ids] of idsByResource) {
    if (ids.length > 1 && !REPEATABLE_TYPES.has(resource.split(' ')[0]!)) report('event-per-settlement', `${resource} has ${ids.length} events: ${ids.join(', ')}`);
  }
}

/**
 * Each delivery reached the endpoint of the merchant whose feed holds its event, signed with that
 * endpoint's secret, under the event's id, always with the same body; every event was acknowledged.
 */
export function checkDeliveries(state: HistoryState, count: Count, report: Report): void {
  const secrets = state.setup?.webhookSecrets ?? {};
  const merchantOf = new Map(state.feed.map((event) => [event.id, event.merchant]));
  const acknowledged = new Set<string>();
  const bodyOf = new Map<string, string>();
  for (const delivery of state.deliveries) {
    count('delivery-consistent');
    const bodyId = parse(delivery.body)?.id;
    if (bodyId !== delivery.webhookId) report('delivery-consistent', `delivery under webhook-id ${delivery.webhookId} carries event ${String(bodyId)}`);
    const owner = merchantOf.get(delivery.webhookId);
    if (owner === undefined) report('delivery-consistent', `webhook-id ${delivery.webhookId} is not an event of the feed`);
    else if (owner !== delivery.merchant) report('delivery-consistent', `event ${delivery.webhookId} of ${owner} was delivered to ${delivery.merchant}'s endpoint`);
    const secret = secrets[delivery.merchant];
    if (secret === undefined || !validSignature(secret, delivery)) report('delivery-consistent', `delivery of ${delivery.webhookId} has a bad signature`);
    const earlier = bodyOf.get(delivery.webhookId);
    if (earlier !== undefined && earlier !== delivery.body) report('delivery-consistent', `event ${delivery.webhookId} was delivered with two different bodies`);
    bodyOf.set(delivery.webhookId, delivery.body);
    if (delivery.status >= 200 && delivery.status < 300) acknowledged.add(delivery.webhookId);
  }
  for (const event of state.feed) {
    count('delivery-consistent');
    if (!acknowledged.has(event.id)) report('delivery-consistent', `event ${event.id} (${event.type} of ${event.dataId}) was never delivered with a 2xx`);
  }
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the secret's base64 part; the timestamp's age is not judged here. */
export function validSignature(secret: string, delivery: Pick<Delivery, 'webhookId' | 'timestamp' | 'body' | 'signature'>): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${delivery.webhookId}.${delivery.timestamp}.${delivery.body}`).digest();
  return delivery.signature.split(' ').some((part) => {
    const [version, value] = part.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}


import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from '../../examples/client/webhook-receiver.js';

// Pure: the example receiver's decision on one delivery, signed here with the standardwebhooks library.
describe("the example webhook receiver (the consumer's half of exactly-once)", () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  const body = JSON.stringify({ id: 'evt_1', type: 'pago.aprobado', timestamp: new Date().toISOString(), data: { id: 'p1', estado: 'APROBADO' } });
  const signed = (id: string, payload = body, key = secret) => {
    const now = new Date();
    return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(key).sign(id, now, payload) };
  };

  it('handles a verified delivery once and answers 200 to its duplicates without handling them again', () => {
    const handled: string[] = [];
    const receiver = new WebhookReceiver(secret, new Set(), (event) => handled.push(event.id));
    expect(receiver.handle(signed('evt_1'), body)).toMatchObject({ outcome: 'accepted', status: 200 });
    expect(receiver.handle(signed('evt_1'), body)).toEqual({ outcome: 'duplicate', status: 200, id: 'evt_1' });
    expect(handled).toEqual(['evt_1']);
  });

  it('rejects with 400 a wrong signature, a changed body and a missing header, handling nothing', () => {
    const handled: string[] = [];
    const receiver = new WebhookReceiver(secret, new Set(), (event) => handled.push(event.id));
    const other = `whsec_${Buffer.from('another secret, not ours 012345').toString('base64')}`;
    expect(receiver.handle(signed('evt_2', body, other), body).outcome).toBe('rejected');
    expect(receiver.handle(signed('evt_2'), body.replace('APROBADO', 'RECHAZADO')).outcome).toBe('rejected');
    expect(receiver.handle({ 'webhook-id': 'evt_2' }, body)).toMatchObject({ outcome: 'rejected', status: 400 });
    expect(handled).toEqual([]);
  });
});

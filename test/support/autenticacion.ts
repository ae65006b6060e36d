import type pg from 'pg';
import type { AppProcess } from './app-process.js';

const EMBEDDED_PROCESSOR_LINE = /processor: the local processor, in this process, at (http:\/\/[^\s"]+)/;

/** The URL of the local processor a service process started in itself, from its start log. */
export function embeddedProcessorUrlOf(app: AppProcess): string {
  const match = EMBEDDED_PROCESSOR_LINE.exec(app.output());
  if (!match) throw new Error(`no embedded processor in the start log:\n${app.output()}`);
  return match[1]!;
}

/** The customer's 3-D Secure challenge, through the local processor's local-only test route. */
export function authenticateAtProcessor(processorUrl: string, intentId: string, outcome: 'success' | 'failure'): Promise<void> {
  return testHelper(processorUrl, `payment_intents/${intentId}/authenticate`, outcome);
}

/** A `processing` intent's outcome, decided by the bank, through the local processor's local-only test route. */
export function settleAtProcessor(processorUrl: string, intentId: string, outcome: 'success' | 'failure'): Promise<void> {
  return testHelper(processorUrl, `payment_intents/${intentId}/settle`, outcome);
}

async function testHelper(processorUrl: string, path: string, outcome: string): Promise<void> {
  const response = await fetch(`${processorUrl}/v1/test_helpers/${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk_test_pagos_tests', 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${outcome}`,
  });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
}

/** The local processor's events of `type` (about `objectId`, when given) and whether each was delivered. */
export async function processorEventsOf(db: pg.Client, type: string, objectId?: string): Promise<Array<{ id: string; delivered_at: Date | null }>> {
  const { rows } = await db.query(
    `SELECT id, delivered_at FROM procesador_local.events WHERE type = $1 AND ($2::text IS NULL OR body::jsonb->'data'->'object'->>'id' = $2) ORDER BY seq`,
    [type, objectId ?? null],
  );
  return rows;
}

/** The processor's intent a payment rests on. */
export async function intentOf(db: pg.Client, pagoId: string): Promise<string> {
  const { rows } = await db.query('SELECT gateway_charge_id FROM pagos WHERE id = $1', [pagoId]);
  if (!rows[0]?.gateway_charge_id) throw new Error(`payment ${pagoId} has no intent`);
  return rows[0].gateway_charge_id;
}

/** The intent's status in the local processor's own table (the same database). */
export async function intentStatusOf(db: pg.Client, intentId: string): Promise<string> {
  const { rows } = await db.query('SELECT status FROM procesador_local.payment_intents WHERE id = $1', [intentId]);
  return rows[0]?.status;
}

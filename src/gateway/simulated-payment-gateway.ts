import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { type Charge, type ChargeRequest, GatewayUnavailableError, type PaymentGateway } from './payment-gateway.js';

export const DECLINED_TOKEN = 'tok_decline';
export const FAILING_TOKEN = 'tok_error';

const CHARGE_COLUMNS = `id, charge_key AS "chargeKey", outcome`;

// Records a charge once per key; a repeated key leaves the first one in place and returns nothing.
const RECORD_CHARGE = `
  INSERT INTO simulated_gateway_charges (charge_key, id, amount, currency, outcome)
  VALUES ($1::text, $2::uuid, $3::bigint, $4::char(3), $5::text)
  ON CONFLICT (charge_key) DO NOTHING
  RETURNING ${CHARGE_COLUMNS}`;
const FIND_CHARGE = `SELECT ${CHARGE_COLUMNS} FROM simulated_gateway_charges WHERE charge_key = $1::text`;

/**
 * A processor stand-in with its own ledger table: approves every token but `tok_decline`
 * (declined) and `tok_error` (fails without charging), deduplicates by charge key, and takes
 * `latencyMs` to answer (half before charging, half after, like a network round trip).
 */
export class SimulatedPaymentGateway implements PaymentGateway {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly latencyMs: number,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async charge(request: ChargeRequest): Promise<Charge> {
    await this.wait();
    if (request.paymentToken === FAILING_TOKEN) throw new GatewayUnavailableError('simulated processor failure');
    const outcome = request.paymentToken === DECLINED_TOKEN ? 'declined' : 'approved';
    const [recorded] = await queryRows<Charge>(this.pool, RECORD_CHARGE, [
      request.chargeKey, randomUUID(), request.amount, request.currency, outcome,
    ]);
    const charge = recorded ?? (await this.findCharge(request.chargeKey))!;
    await this.wait();
    return charge;
  }

  async findCharge(chargeKey: string): Promise<Charge | undefined> {
    const [charge] = await queryRows<Charge>(this.pool, FIND_CHARGE, [chargeKey]);
    return charge;
  }

  private async wait(): Promise<void> {
    if (this.latencyMs > 0) await sleep(this.latencyMs / 2);
  }
}

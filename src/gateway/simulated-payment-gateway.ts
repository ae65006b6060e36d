import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { SQLSTATE, sqlStateOf } from '../database/postgres-errors.js';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import {
  type Charge, type ChargeRequest, GatewayUnavailableError, type PaymentGateway, type Refund, RefundRefusedError, type RefundRequest,
} from './payment-gateway.js';

export const DECLINED_TOKEN = 'tok_decline';
export const FAILING_TOKEN = 'tok_error';
/** Refunds of exactly this many minor units fail without refunding, as `tok_error` does for charges. */
export const FAILING_REFUND_AMOUNT = 13;

const CHARGE_COLUMNS = `id, charge_key AS "chargeKey", outcome`;
const REFUND_COLUMNS = `id, refund_key AS "refundKey", charge_id::text AS "chargeId", amount::float8 AS amount`;

// Records a charge once per key; a repeated key leaves the first one in place and returns nothing.
const RECORD_CHARGE = `
  INSERT INTO simulated_gateway_charges (charge_key, id, amount, currency, outcome)
  VALUES ($1::text, $2::uuid, $3::bigint, $4::char(3), $5::text)
  ON CONFLICT (charge_key) DO NOTHING
  RETURNING ${CHARGE_COLUMNS}`;
const FIND_CHARGE = `SELECT ${CHARGE_COLUMNS} FROM simulated_gateway_charges WHERE charge_key = $1::text`;

// Records a refund once per key, against an approved charge, and adds it to the charge's refunded
// total in the same statement. Two refunds racing for the rest of a charge both insert, but the
// second UPDATE re-reads the row the first committed and breaks CHECK (refunded <= amount): 23514,
// and the whole statement (its insert too) is undone. No row: the key was used already, or the
// charge is unknown or declined.
const RECORD_REFUND = `
  WITH refund AS (
    INSERT INTO simulated_gateway_refunds (refund_key, id, charge_id, amount)
    SELECT $1::text, $2::uuid, c.id, $4::bigint FROM simulated_gateway_charges c WHERE c.id = $3::uuid AND c.outcome = 'approved'
    ON CONFLICT (refund_key) DO NOTHING
    RETURNING ${REFUND_COLUMNS}),
  counted AS (
    UPDATE simulated_gateway_charges c SET refunded = c.refunded + $4::bigint FROM refund r WHERE c.id = r."chargeId"::uuid RETURNING c.id)
  SELECT refund.* FROM refund JOIN counted ON counted.id = refund."chargeId"::uuid`;
const FIND_REFUND = `SELECT ${REFUND_COLUMNS} FROM simulated_gateway_refunds WHERE refund_key = $1::text`;

/**
 * A processor stand-in with its own ledger tables: approves every token but `tok_decline`
 * (declined) and `tok_error` (fails without charging), refunds approved charges up to what they
 * charged except amounts of {@link FAILING_REFUND_AMOUNT} (fails without refunding), deduplicates
 * by charge and refund key, and takes `latencyMs` to answer (half before, half after, like a round trip).
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

  async refund(request: RefundRequest): Promise<Refund> {
    await this.wait();
    if (request.amount === FAILING_REFUND_AMOUNT) throw new GatewayUnavailableError('simulated processor failure');
    const refund = (await this.recordRefund(request)) ?? (await this.findRefund(request.refundKey));
    if (!refund) throw new RefundRefusedError(`charge ${request.chargeId} is not an approved charge`);
    await this.wait();
    return refund;
  }

  async findRefund(refundKey: string): Promise<Refund | undefined> {
    const [refund] = await queryRows<Refund>(this.pool, FIND_REFUND, [refundKey]);
    return refund;
  }

  private async recordRefund(request: RefundRequest): Promise<Refund | undefined> {
    try {
      const [recorded] = await queryRows<Refund>(this.pool, RECORD_REFUND, [request.refundKey, randomUUID(), request.chargeId, request.amount]);
      return recorded;
    } catch (error) {
      if (sqlStateOf(error) === SQLSTATE.checkViolation) throw new RefundRefusedError(`refunds of charge ${request.chargeId} would exceed it`);
      throw error;
    }
  }

  private async wait(): Promise<void> {
    if (this.latencyMs > 0) await sleep(this.latencyMs / 2);
  }
}

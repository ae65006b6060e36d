import type pg from 'pg';
import { INTENT_STATUSES, REFUND_STATUSES } from './statuses.js';

/**
 * The local processor's own tables, in their own schema of whatever database it is given.
 *
 * This is a development stand-in's bootstrap, not a service migration: the processor plays an
 * external system (Stripe), so the service's migrations know nothing of these tables and this file
 * creates them on every start when missing. Column names are a contract: the service's tests count
 * charges and refunds with SQL on them.
 */
export const SCHEMA = 'procesador_local';

// Any fixed number: two instances starting at once on one database serialise their bootstrap on
// it instead of racing on CREATE ... IF NOT EXISTS (which can fail with 23505 on the catalog).
const BOOTSTRAP_LOCK_ID = 7_207_015_111;

const STATEMENTS = [
  `CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`,
  `CREATE TABLE IF NOT EXISTS ${SCHEMA}.payment_intents (
     id text PRIMARY KEY,
     amount bigint NOT NULL CHECK (amount > 0),
     currency text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
     status text NOT NULL,
     payment_method text NULL,
     payment_method_types jsonb NOT NULL,
     automatic_payment_methods jsonb NULL,
     last_payment_error jsonb NULL,
     metadata jsonb NOT NULL DEFAULT '{}',
     description text NULL,
     latest_charge text NULL,
     canceled_at timestamptz NULL,
     cancellation_reason text NULL,
     created timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX IF NOT EXISTS payment_intents_newest_first ON ${SCHEMA}.payment_intents (created DESC, id DESC)`,
  // One row per successful confirmation: the table that proves "charged once".
  `CREATE TABLE IF NOT EXISTS ${SCHEMA}.charges (
     id text PRIMARY KEY,
     payment_intent text NOT NULL REFERENCES ${SCHEMA}.payment_intents (id),
     amount bigint NOT NULL CHECK (amount > 0),
     amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
     created timestamptz NOT NULL DEFAULT now()
   )`,
  // A second charge of one intent is impossible, whatever the application code does.
  `CREATE UNIQUE INDEX IF NOT EXISTS charges_one_per_payment_intent ON ${SCHEMA}.charges (payment_intent)`,
  `CREATE TABLE IF NOT EXISTS ${SCHEMA}.refunds (
     id text PRIMARY KEY,
     payment_intent text NOT NULL REFERENCES ${SCHEMA}.payment_intents (id),
     charge text NOT NULL REFERENCES ${SCHEMA}.charges (id),
     amount bigint NOT NULL CHECK (amount > 0),
     currency text NOT NULL,
     status text NOT NULL,
     metadata jsonb NOT NULL DEFAULT '{}',
     reason text NULL,
     created timestamptz NOT NULL DEFAULT now()
   )`,
  // The payment method the charge was made with as the client named it (a `tok_` stays a `tok_`):
  // the refund test values are read from it.
  `ALTER TABLE ${SCHEMA}.charges ADD COLUMN IF NOT EXISTS confirmed_with text NULL`,
  `ALTER TABLE ${SCHEMA}.refunds ADD COLUMN IF NOT EXISTS failure_reason text NULL`,
  `CREATE INDEX IF NOT EXISTS refunds_newest_first ON ${SCHEMA}.refunds (created DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS refunds_of_payment_intent ON ${SCHEMA}.refunds (payment_intent, created DESC, id DESC)`,
  `CREATE TABLE IF NOT EXISTS ${SCHEMA}.idempotency_keys (
     key text PRIMARY KEY,
     request_hash text NOT NULL,
     status text NOT NULL CHECK (status IN ('in_flight', 'completed')),
     locked_at timestamptz NOT NULL,
     instance int NOT NULL,
     response_status int NULL,
     response_body text NULL,
     created timestamptz NOT NULL DEFAULT now(),
     CHECK (status = 'in_flight' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
   )`,
  // Statuses grew after the first databases were made: their inline CHECKs are replaced once (see replaceCheck).
  replaceCheck('payment_intents', 'payment_intents_status_check', 'payment_intents_status_v2', `status IN (${quoted(INTENT_STATUSES)})`),
  replaceCheck('refunds', 'refunds_status_check', 'refunds_status_v2', `status IN (${quoted(REFUND_STATUSES)})`),
  // A real-looking token is single-use: its first confirmation inserts it here, in the confirming transaction.
  `CREATE TABLE IF NOT EXISTS ${SCHEMA}.used_tokens (
     token text PRIMARY KEY,
     payment_intent text NOT NULL REFERENCES ${SCHEMA}.payment_intents (id),
     created timestamptz NOT NULL DEFAULT now()
   )`,
  // Every state change writes its event in its own transaction; `seq` orders delivery (oldest first).
  `CREATE TABLE IF NOT EXISTS ${SCHEMA}.events (
     id text PRIMARY KEY,
     seq bigserial NOT NULL UNIQUE,
     type text NOT NULL,
     body text NOT NULL,
     created timestamptz NOT NULL,
     delivered_at timestamptz NULL,
     attempts int NOT NULL DEFAULT 0,
     last_status int NULL,
     last_error text NULL,
     next_attempt_at timestamptz NOT NULL DEFAULT now(),
     held boolean NOT NULL DEFAULT false,
     leased_by int NULL,
     lease_until timestamptz NULL
   )`,
  `CREATE INDEX IF NOT EXISTS events_newest_first ON ${SCHEMA}.events (created DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS events_undelivered ON ${SCHEMA}.events (seq) WHERE delivered_at IS NULL`,
];

/**
 * Drops `oldName` and adds `newName` unless `newName` exists: idempotent, and the table is locked
 * and checked once per database rather than on every start.
 */
function replaceCheck(table: string, oldName: string, newName: string, expression: string): string {
  return `DO $$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '${newName}' AND conrelid = '${SCHEMA}.${table}'::regclass) THEN
       ALTER TABLE ${SCHEMA}.${table} DROP CONSTRAINT IF EXISTS ${oldName};
       ALTER TABLE ${SCHEMA}.${table} ADD CONSTRAINT ${newName} CHECK (${expression});
     END IF;
   END $$`;
}

function quoted(values: readonly string[]): string {
  return values.map((value) => `'${value}'`).join(', ');
}

/** Creates the schema and tables when missing, in one transaction under an advisory lock. */
export async function createSchemaIfMissing(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [BOOTSTRAP_LOCK_ID]);
    for (const statement of STATEMENTS) await client.query(statement);
    await client.query('COMMIT');
    client.release();
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(true);
    throw error;
  }
}

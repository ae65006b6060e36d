import type pg from 'pg';

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
     status text NOT NULL CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'requires_action', 'succeeded', 'canceled')),
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
     status text NOT NULL CHECK (status IN ('succeeded')),
     metadata jsonb NOT NULL DEFAULT '{}',
     reason text NULL,
     created timestamptz NOT NULL DEFAULT now()
   )`,
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
];

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

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addLegacyBounds, createEventCreatedAtTrigger, DELIVERIES_LEGACY_BOUND, EVENTOS_LEGACY_BOUND } from './1764700030000-prepare-eventos-and-deliveries-for-partitions.js';

// Partitions the migration creates ahead; the purge job keeps EVENT_PARTITION_DAYS_AHEAD days ready from then on.
const DAYS_CREATED_AHEAD = 7;

/**
 * `eventos` and `webhook_deliveries` become tables partitioned by UTC day of creation (RANGE on the
 * event's `created_at`; deliveries on `event_created_at`, their event's), so that the purge drops a day
 * instead of deleting its rows. Zero copy, as migration 1764700028500 did for the keys: each old table
 * becomes the partition `<table>_legacy`, covering everything up to the bound its CHECK proved, and is
 * dropped whole once that day is past the TTL. The previous migration built the indexes ATTACH adopts
 * and proved the bounds, so the ACCESS EXCLUSIVE held here lasts milliseconds.
 * Primary keys include the partition column: (id, created_at) and (event_id, endpoint_id,
 * event_created_at); an event id is random, and a delivery's event fixes its event_created_at, so both
 * stay as unique as before. The foreign key deliveries → eventos is dropped: between two partitioned
 * tables, detaching or dropping a day takes locks on both in the opposite order from the relay, and the
 * two deadlocked (docs/design.md); the purge drops a day's deliveries before that day's events instead.
 * `seq` keeps counting: the parent's identity starts after the old table's.
 */
export class PartitionEventosAndDeliveries1764700030500 implements MigrationInterface {
  name = 'PartitionEventosAndDeliveries1764700030500';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The relay's order (events, then deliveries): it waits for this rather than deadlocking with it.
    await queryRunner.query(`LOCK TABLE eventos, webhook_deliveries IN ACCESS EXCLUSIVE MODE`);
    await queryRunner.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey`);
    await partitionEventos(queryRunner);
    await partitionDeliveries(queryRunner);
    await attachLegacyPartition(queryRunner, 'eventos', 'created_at', EVENTOS_LEGACY_BOUND);
    await attachLegacyPartition(queryRunner, 'webhook_deliveries', 'event_created_at', DELIVERIES_LEGACY_BOUND);
    for (const table of ['eventos', 'webhook_deliveries']) {
      await queryRunner.query(`SELECT create_daily_partitions('${table}', now(), now() + make_interval(days => ${DAYS_CREATED_AHEAD}))`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await unpartitionEventos(queryRunner);
    await unpartitionDeliveries(queryRunner);
    await queryRunner.query(`
      ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey
        FOREIGN KEY (event_id) REFERENCES eventos (id) ON DELETE CASCADE`);
    await addLegacyBounds(queryRunner);
  }
}

async function partitionEventos(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`ALTER TABLE eventos RENAME TO eventos_legacy`);
  const next = await nextSeq(queryRunner, 'eventos_legacy');
  // PostgreSQL 17+ refuses to attach a table with an identity column: the parent's numbers its rows.
  await queryRunner.query(`ALTER TABLE eventos_legacy ALTER COLUMN seq DROP IDENTITY`);
  await queryRunner.query(`ALTER TABLE eventos_legacy DROP CONSTRAINT eventos_pkey`);
  await queryRunner.query(`ALTER TABLE eventos_legacy ADD CONSTRAINT eventos_legacy_pkey PRIMARY KEY USING INDEX eventos_legacy_id_created_at`);
  await queryRunner.query(`DROP INDEX eventos_feed`);
  await queryRunner.query(`DROP INDEX eventos_created_at`);
  await queryRunner.query(`ALTER INDEX eventos_not_fanned_out RENAME TO eventos_legacy_not_fanned_out`);
  await queryRunner.query(`CREATE TABLE eventos (LIKE eventos_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (created_at)`);
  // Copied by LIKE; the legacy partition keeps it, the parent must not.
  await queryRunner.query(`ALTER TABLE eventos DROP CONSTRAINT IF EXISTS ${EVENTOS_LEGACY_BOUND}`);
  await queryRunner.query(`ALTER TABLE eventos ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (START WITH ${next})`);
  await queryRunner.query(`ALTER TABLE eventos ADD PRIMARY KEY (id, created_at)`);
  await queryRunner.query(`CREATE INDEX eventos_feed ON eventos (client_id, txid, seq)`);
  await queryRunner.query(`CREATE INDEX eventos_not_fanned_out ON eventos (created_at) WHERE fanned_out_at IS NULL`);
}

async function partitionDeliveries(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_legacy`);
  await queryRunner.query(`DROP TRIGGER webhook_deliveries_event_created_at ON webhook_deliveries_legacy`);
  await queryRunner.query(`DROP FUNCTION webhook_deliveries_fill_event_created_at()`);
  // No scan: the validated CHECK already says so.
  await queryRunner.query(`ALTER TABLE webhook_deliveries_legacy ALTER COLUMN event_created_at SET NOT NULL`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries_legacy DROP CONSTRAINT webhook_deliveries_pkey`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries_legacy ADD CONSTRAINT webhook_deliveries_legacy_pkey PRIMARY KEY USING INDEX webhook_deliveries_legacy_key`);
  await queryRunner.query(`ALTER INDEX webhook_deliveries_undelivered RENAME TO webhook_deliveries_legacy_undelivered`);
  await queryRunner.query(`
    CREATE TABLE webhook_deliveries (LIKE webhook_deliveries_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
      PARTITION BY RANGE (event_created_at)`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS ${DELIVERIES_LEGACY_BOUND}`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries ADD PRIMARY KEY (event_id, endpoint_id, event_created_at)`);
  // The legacy partition's own (same definition) is adopted by ATTACH, unvalidated work skipped.
  await queryRunner.query(`
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
      FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE`);
  await queryRunner.query(`CREATE INDEX webhook_deliveries_undelivered ON webhook_deliveries (created_at) WHERE delivered_at IS NULL`);
}

/**
 * The old table as the partition of every day up to the bound its CHECK proved; without that CHECK
 * (gone only if dropped by hand), up to two UTC days past its latest row, and ATTACH scans it. An empty
 * table is dropped.
 */
async function attachLegacyPartition(queryRunner: QueryRunner, table: string, column: string, boundConstraint: string): Promise<void> {
  await queryRunner.query(`
    DO $$
    DECLARE
      bound timestamptz;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM ${table}_legacy) THEN
        DROP TABLE ${table}_legacy;
        RETURN;
      END IF;
      SELECT substring(pg_get_constraintdef(oid) FROM '''([^'']*)''')::timestamptz INTO bound
        FROM pg_constraint WHERE conrelid = '${table}_legacy'::regclass AND conname = '${boundConstraint}';
      IF bound IS NULL THEN
        SELECT (date_trunc('day', max(${column}) AT TIME ZONE 'UTC') + interval '2 days') AT TIME ZONE 'UTC' INTO bound FROM ${table}_legacy;
      END IF;
      EXECUTE format('ALTER TABLE ${table} ATTACH PARTITION ${table}_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
    END $$`);
}

/**
 * The rows copied into a plain table again (what `down` can do: a copy, under lock), with what the
 * previous migration had added to it, so that its `down`, or this `up` again, finds it as it left it.
 */
async function unpartitionEventos(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`
    CREATE TABLE eventos_unpartitioned (LIKE eventos INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await queryRunner.query(`ALTER TABLE eventos_unpartitioned DROP CONSTRAINT IF EXISTS ${EVENTOS_LEGACY_BOUND}`);
  await queryRunner.query(`INSERT INTO eventos_unpartitioned SELECT * FROM eventos`);
  const next = await nextSeq(queryRunner, 'eventos');
  await queryRunner.query(`DROP TABLE eventos`);
  await queryRunner.query(`ALTER TABLE eventos_unpartitioned RENAME TO eventos`);
  await queryRunner.query(`ALTER TABLE eventos ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (START WITH ${next})`);
  await queryRunner.query(`ALTER TABLE eventos ADD CONSTRAINT eventos_pkey PRIMARY KEY (id)`);
  await queryRunner.query(`CREATE UNIQUE INDEX eventos_feed ON eventos (client_id, txid, seq)`);
  await queryRunner.query(`CREATE INDEX eventos_created_at ON eventos (created_at)`);
  await queryRunner.query(`CREATE INDEX eventos_not_fanned_out ON eventos (created_at) WHERE fanned_out_at IS NULL`);
  // What the previous migration's `down` removes, there again for it.
  await queryRunner.query(`CREATE UNIQUE INDEX eventos_legacy_id_created_at ON eventos (id, created_at)`);
  await queryRunner.query(`CREATE INDEX eventos_legacy_feed ON eventos (client_id, txid, seq)`);
}

async function unpartitionDeliveries(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`
    CREATE TABLE webhook_deliveries_unpartitioned (LIKE webhook_deliveries INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries_unpartitioned DROP CONSTRAINT IF EXISTS ${DELIVERIES_LEGACY_BOUND}`);
  // Deliveries whose event is gone (dropped first by a purge that stopped halfway) can't keep the foreign key.
  await queryRunner.query(`
    INSERT INTO webhook_deliveries_unpartitioned
    SELECT d.* FROM webhook_deliveries d WHERE EXISTS (SELECT 1 FROM eventos e WHERE e.id = d.event_id)`);
  await queryRunner.query(`DROP TABLE webhook_deliveries`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries_unpartitioned RENAME TO webhook_deliveries`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries ALTER COLUMN event_created_at DROP NOT NULL`);
  await queryRunner.query(`ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (event_id, endpoint_id)`);
  await queryRunner.query(`CREATE UNIQUE INDEX webhook_deliveries_legacy_key ON webhook_deliveries (event_id, endpoint_id, event_created_at)`);
  await queryRunner.query(`
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
      FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE`);
  await queryRunner.query(`CREATE INDEX webhook_deliveries_undelivered ON webhook_deliveries (created_at) WHERE delivered_at IS NULL`);
  await createEventCreatedAtTrigger(queryRunner);
}

/** The number the identity of `table`.seq would give next (its start while it has given none). */
async function nextSeq(queryRunner: QueryRunner, table: string): Promise<number> {
  const [{ next }] = await queryRunner.query(`
    SELECT coalesce(pg_sequence_last_value(seqrelid) + seqincrement, seqstart) AS next
      FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('${table}', 'seq')::regclass`);
  return Number(next);
}

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createPartitionFunctions } from './1764700028500-partition-idempotency-keys.js';

/**
 * The functions of migration 1764700028500 made for any table partitioned by UTC day, so that keys,
 * events and webhook deliveries share them (src/database/daily-partitions.ts); the keys' own are dropped.
 * `daily_partitions(parent)`: each partition with its bounds (parsed from the catalog's text) and whether
 * a DETACH ... CONCURRENTLY of it was interrupted.
 * `create_daily_partitions(parent, first, through)`: one partition `<parent>_pYYYYMMDD` per UTC day from
 * `first`'s to `through`'s, in the parent's schema, skipping days an existing partition covers. CREATE
 * TABLE + ATTACH rather than CREATE TABLE ... PARTITION OF: ATTACH takes SHARE UPDATE EXCLUSIVE on the
 * parent, which no writer's lock conflicts with; PARTITION OF would take ACCESS EXCLUSIVE. Callers queue
 * on one advisory lock (the keys' functions took the same), then find the days made.
 * `drop_detached_daily_partition(parent, name)`: drops a partition the purge detached, returning about
 * how many rows it held (from the table's statistics; counted only when it was never analyzed); NULL
 * when it is no such table (another replica dropped it), or still a partition. lock_timeout: dropping a
 * table drops its foreign keys' triggers on the referenced table, a lock a long transaction could hold
 * up; the next run retries.
 */
export class DailyPartitionFunctions1764700029000 implements MigrationInterface {
  name = 'DailyPartitionFunctions1764700029000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION daily_partitions(parent regclass)
      RETURNS TABLE (name text, lower_bound timestamptz, upper_bound timestamptz, detach_pending boolean)
      LANGUAGE sql STABLE AS $$
        SELECT c.relname::text,
               CASE WHEN b.expr LIKE 'FOR VALUES FROM (MINVALUE)%' THEN '-infinity'::timestamptz
                    ELSE substring(b.expr FROM 'FROM \\(''([^'']*)''\\)')::timestamptz END,
               substring(b.expr FROM 'TO \\(''([^'']*)''\\)')::timestamptz,
               i.inhdetachpending
          FROM pg_inherits i
          JOIN pg_class c ON c.oid = i.inhrelid
          CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS expr) b
         WHERE i.inhparent = parent
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION create_daily_partitions(parent regclass, first timestamptz, through timestamptz) RETURNS int
      LANGUAGE plpgsql VOLATILE SET lock_timeout = '5s' AS $$
      DECLARE
        schema_name text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent);
        table_name text := (SELECT relname FROM pg_class WHERE oid = parent);
        day date;
        day_start timestamptz;
        partition_name text;
        created int := 0;
      BEGIN
        PERFORM pg_advisory_xact_lock(1764700025, 0);
        FOR day IN SELECT generate_series((first AT TIME ZONE 'UTC')::date, (through AT TIME ZONE 'UTC')::date, interval '1 day')::date LOOP
          day_start := day::timestamp AT TIME ZONE 'UTC';
          CONTINUE WHEN EXISTS (
            SELECT 1 FROM daily_partitions(parent) p WHERE p.lower_bound < day_start + interval '1 day' AND p.upper_bound > day_start);
          partition_name := table_name || '_p' || to_char(day, 'YYYYMMDD');
          EXECUTE format('CREATE TABLE %I.%I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', schema_name, partition_name, parent);
          EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
            parent, schema_name, partition_name, day_start, day_start + interval '1 day');
          created := created + 1;
        END LOOP;
        RETURN created;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION drop_detached_daily_partition(parent regclass, partition_name text) RETURNS bigint
      LANGUAGE plpgsql VOLATILE SET lock_timeout = '5s' AS $$
      DECLARE
        schema_name text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent);
        table_name text := (SELECT relname FROM pg_class WHERE oid = parent);
        partition regclass;
        rows bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(1764700025, 0);
        IF partition_name !~ ('^' || table_name || '_(p[0-9]{8}|legacy)$') THEN
          RETURN NULL;
        END IF;
        partition := to_regclass(format('%I.%I', schema_name, partition_name));
        IF partition IS NULL OR (SELECT relispartition FROM pg_class WHERE oid = partition) THEN
          RETURN NULL;
        END IF;
        -- The statistics' count (autovacuum keeps it within about 10%), not count(*): counting reads
        -- the whole day, a seq scan beside the requests. Never analyzed (a small or young table): counted.
        rows := (SELECT CASE WHEN reltuples >= 0 THEN reltuples::bigint END FROM pg_class WHERE oid = partition);
        IF rows IS NULL THEN
          EXECUTE format('SELECT count(*) FROM %s', partition) INTO rows;
        END IF;
        EXECUTE format('DROP TABLE %s', partition);
        RETURN rows;
      END $$`);
    await queryRunner.query(`DROP FUNCTION idempotency_drop_detached_key_partition(text)`);
    await queryRunner.query(`DROP FUNCTION idempotency_create_key_partitions(timestamptz, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION idempotency_key_partitions()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await createPartitionFunctions(queryRunner);
    await queryRunner.query(`DROP FUNCTION drop_detached_daily_partition(regclass, text)`);
    await queryRunner.query(`DROP FUNCTION create_daily_partitions(regclass, timestamptz, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION daily_partitions(regclass)`);
  }
}

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { CONFIG_DEFAULTS } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { EVENT_PARTITION_DAYS_AHEAD, EventosPurgeJob } from '../../src/eventos/eventos-purge.job.js';
import { EventosService } from '../../src/eventos/eventos.service.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { nuevoPago, postPago } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { leaveDetachPending, partitionsOf, tableExists as tableExistsIn } from '../support/partitions.js';

/**
 * The partitioned `eventos` and `webhook_deliveries` (migration 1764700030500) under writes and
 * restarts: days created ahead, an expired day dropped while payments write events, a purge stopped
 * halfway, two replicas purging at once. Real: the service (writing events through its API), the
 * purge job of the service on pools of real connections, PostgreSQL. Old days are made by inserting
 * rows with a past `created_at` into partitions created for those days, never by waiting.
 */
const TTL_DAYS = 30;

describe('partitions of eventos and webhook_deliveries', () => {
  let app: AppProcess;
  let db: pg.Client;
  let url: string;
  let endpointId: string;
  const replicas: DataSource[] = [];

  beforeAll(async () => {
    url = await createTestDatabase('event_partitions');
    app = await startAppProcess(url);
    db = await connect(url);
    // Disabled: the service's relay fans nothing out to it, so every delivery here is one written by the test.
    const { rows } = await db.query(
      `INSERT INTO webhook_endpoints (id, client_id, url, event_types, secret, disabled_at)
       VALUES (gen_random_uuid(), 'alice', 'https://93.184.215.14/hook', '{pago.aprobado}', 'whsec_x', now()) RETURNING id`,
    );
    endpointId = rows[0].id;
  });

  afterAll(async () => {
    await db?.end();
    for (const dataSource of replicas) await dataSource.destroy();
    await app?.stop();
  });

  /** A replica's purge job, on a pool of its own; nothing scheduled (driven by purgeOnce). */
  const purgeJob = async (): Promise<EventosPurgeJob> => {
    const dataSource = await new DataSource(dataSourceOptions({ url, poolSize: 3 })).initialize();
    replicas.push(dataSource);
    return new EventosPurgeJob(dataSource, new SchedulerRegistry(), { ttlDays: TTL_DAYS, purgeCron: CONFIG_DEFAULTS.purgeCron }, url);
  };
  const partitions = (table: string, where = 'true'): Promise<string[]> => partitionsOf(db, table, where);
  const expired = (table: string) => partitions(table, `upper_bound <= now() - interval '${TTL_DAYS} days'`);
  const tableExists = (name: string): Promise<boolean> => tableExistsIn(db, name);
  const count = async (table: string, column: string, prefix: string): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} LIKE $1 || '%'`, [prefix])).rows[0].n;

  /** A prefix of event ids: `evt_` and 20 hex digits, to which insertOldEvents adds 12 (ids as the service's). */
  const idPrefix = (): string => `evt_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  /** `n` events of `daysAgo` days ago (already fanned out), each with its delivery, in their day's partitions. */
  const insertOldEvents = async (n: number, daysAgo: number, prefix: string): Promise<void> => {
    for (const table of ['eventos', 'webhook_deliveries']) {
      await db.query(`SELECT create_daily_partitions($1::text::regclass, now() - make_interval(days => $2::int), now() - make_interval(days => $2::int))`, [table, daysAgo]);
    }
    await db.query(
      `INSERT INTO eventos (id, client_id, type, payload, created_at, fanned_out_at)
       SELECT $1 || lpad(i::text, 12, '0'), 'alice', 'pago.aprobado', '{}', now() - make_interval(days => $3::int), now() - make_interval(days => $3::int)
         FROM generate_series(1, $2::int) i`,
      [prefix, n, daysAgo],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, event_created_at, created_at)
       SELECT id, $2, created_at, created_at FROM eventos WHERE id LIKE $1 || '%'`,
      [prefix, endpointId],
    );
  };

  it(`partitions stand ready from today to ${EVENT_PARTITION_DAYS_AHEAD} days ahead, the same days for events and their deliveries`, async () => {
    await (await purgeJob()).purgeOnce();
    const ready = await db.query(
      `SELECT max(upper_bound) > now() + make_interval(days => $1::int) AS ready FROM daily_partitions('eventos')`, [EVENT_PARTITION_DAYS_AHEAD]);
    expect(ready.rows[0].ready).toBe(true);
    const days = async (table: string) => (await partitions(table, 'upper_bound > now()')).map((name) => name.replace(`${table}_`, ''));
    expect(await days('webhook_deliveries')).toEqual(await days('eventos'));
  });

  it('an expired day is dropped, deliveries first, while payments write events: no live event or delivery is lost', async () => {
    const old = idPrefix();
    const kept = idPrefix();
    await insertOldEvents(5_000, TTL_DAYS + 2, old);
    await insertOldEvents(50, TTL_DAYS - 1, kept);
    const job = await purgeJob();
    const payments = (async () => {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const answers = await Promise.all(Array.from({ length: 5 }, () => postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() })));
        ids.push(...answers.map((answer) => String(answer.json.id)));
      }
      return ids;
    })();
    const [ids, purged] = await Promise.all([payments, job.purgeOnce()]);
    expect(purged).toBe(5_000);
    expect(await count('eventos', 'id', old)).toBe(0);
    expect(await count('webhook_deliveries', 'event_id', old)).toBe(0);
    expect(await expired('eventos')).toEqual([]);
    expect(await expired('webhook_deliveries')).toEqual([]);
    const written = await db.query(`SELECT count(DISTINCT payload->'data'->>'id')::int AS n FROM eventos WHERE payload->'data'->>'id' = ANY($1)`, [ids]);
    expect(written.rows[0].n).toBe(ids.length);
    expect(await count('eventos', 'id', kept)).toBe(50);
    expect(await count('webhook_deliveries', 'event_id', kept)).toBe(50);
    // The read of GET /eventos/{id}, through every partition (its payload here is no real event body).
    expect(await new EventosService(replicas[0]!).findOne('alice', `${kept}000000000001`)).toBe('{}');
  });

  it('two replicas purging at once both succeed, and each day is dropped once', async () => {
    const [old, older] = [idPrefix(), idPrefix()];
    await insertOldEvents(300, TTL_DAYS + 1, old);
    await insertOldEvents(200, TTL_DAYS + 3, older);
    const [first, second] = await Promise.all([(await purgeJob()).purgeOnce(), (await purgeJob()).purgeOnce()]);
    expect(first + second).toBe(500);
    expect(await count('eventos', 'id', old)).toBe(0);
    expect(await count('eventos', 'id', older)).toBe(0);
    expect(await expired('eventos')).toEqual([]);
    expect(await expired('webhook_deliveries')).toEqual([]);
  });

  it('a purge stopped halfway (deliveries detached, the events detach pending) is finished by the next run', async () => {
    const old = idPrefix();
    await insertOldEvents(80, TTL_DAYS + 1, old);
    const [deliveries] = await expired('webhook_deliveries');
    const [events] = await expired('eventos');
    await db.query(`ALTER TABLE webhook_deliveries DETACH PARTITION ${deliveries}`);
    await leaveDetachPending(url, db, 'eventos', events!);
    expect(await partitions('eventos', 'detach_pending')).toEqual([events]);
    expect(await (await purgeJob()).purgeOnce()).toBe(80);
    expect(await tableExists(deliveries!)).toBe(false);
    expect(await tableExists(events!)).toBe(false);
  });
});

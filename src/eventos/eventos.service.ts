import { Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { EVENT_BY_ID, EVENT_POSITION, FEED_AFTER, FEED_FROM_START } from './eventos.sql.js';

type PayloadRow = { payload: string };

/** Reads the outbox for the feed: a client's own events only, as their delivered bodies (JSON text). */
@Injectable()
export class EventosService {
  private readonly pool: pg.Pool;

  constructor(dataSource: DataSource) {
    this.pool = pgPoolOf(dataSource);
  }

  async findOne(clientId: string, id: string): Promise<string | undefined> {
    const [row] = await queryRows<PayloadRow>(this.pool, EVENT_BY_ID, [id, clientId]);
    return row?.payload;
  }

  /** The client's events after `after` (oldest first, see FEED_FROM_START); undefined when `after` is not one of theirs. */
  async list(clientId: string, after: string | undefined, limit: number): Promise<string[] | undefined> {
    if (after === undefined) return (await queryRows<PayloadRow>(this.pool, FEED_FROM_START, [clientId, limit])).map((row) => row.payload);
    const [position] = await queryRows<{ txid: string; seq: string }>(this.pool, EVENT_POSITION, [after, clientId]);
    if (!position) return undefined;
    const rows = await queryRows<PayloadRow>(this.pool, FEED_AFTER, [clientId, limit, position.txid, position.seq]);
    return rows.map((row) => row.payload);
  }
}

import { type Answer, answer, invalidParameter, resourceMissing } from './answers.js';
import type { FormObject } from './form-body.js';
import { optionalString } from './params.js';
import type { Queryable } from './transaction.js';

/**
 * Stripe's cursor pagination over a table listed newest first (`created DESC, id DESC`):
 * `starting_after` pages towards older rows, `ending_before` towards newer ones, and the page is
 * always given newest first (the SDK's auto-pagination relies on both).
 */
export interface PageRequest {
  readonly limit: number;
  readonly startingAfter: string | undefined;
  readonly endingBefore: string | undefined;
}

/** What is listed: a table and a constant condition on it, whose values start at $3. */
export interface ListedRows {
  readonly table: string;
  readonly condition: string;
  readonly values: readonly unknown[];
}

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

export function pageRequestOf(params: FormObject): PageRequest {
  const limitText = optionalString(params, 'limit');
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '10') || limit < 1 || limit > MAX_LIMIT) {
    throw invalidParameter('limit', `Invalid limit: must be an integer between 1 and ${MAX_LIMIT}.`);
  }
  const startingAfter = optionalString(params, 'starting_after');
  const endingBefore = optionalString(params, 'ending_before');
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw invalidParameter('ending_before', 'You may only specify one of these parameters: ending_before, starting_after.');
  }
  return { limit, startingAfter, endingBefore };
}

/** One page as Stripe's list object, each row shown with `toObject`. */
export async function listPage<Row>(db: Queryable, listed: ListedRows, page: PageRequest, url: string, toObject: (row: Row) => unknown): Promise<Answer> {
  const cursor = page.startingAfter ?? page.endingBefore;
  if (cursor !== undefined) await assertCursorExists(db, listed.table, cursor, page.startingAfter ? 'starting_after' : 'ending_before');
  const rows = page.endingBefore === undefined ? await olderRows<Row>(db, listed, page.limit + 1, cursor) : await newerRows<Row>(db, listed, page.limit + 1, cursor!);
  const hasMore = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (page.endingBefore !== undefined) data.reverse();
  return answer(200, { object: 'list', data: data.map(toObject), has_more: hasMore, url });
}

async function assertCursorExists(db: Queryable, table: string, id: string, param: string): Promise<void> {
  const { rowCount } = await db.query(`SELECT 1 FROM ${table} WHERE id = $1::text`, [id]);
  if (rowCount === 0) throw resourceMissing(400, param, `No such object: '${id}'`);
}

/** Newest first, strictly older than the cursor (from the newest when there is none). */
async function olderRows<Row>(db: Queryable, listed: ListedRows, limit: number, cursor: string | undefined): Promise<Row[]> {
  const { rows } = await db.query(
    `SELECT * FROM ${listed.table}
      WHERE ${listed.condition}
        AND ($2::text IS NULL OR (created, id) < (SELECT created, id FROM ${listed.table} WHERE id = $2::text))
      ORDER BY created DESC, id DESC LIMIT $1::int`,
    [limit, cursor ?? null, ...listed.values],
  );
  return rows as Row[];
}

/** Oldest first, strictly newer than the cursor: the rows just before it in the newest-first order. */
async function newerRows<Row>(db: Queryable, listed: ListedRows, limit: number, cursor: string): Promise<Row[]> {
  const { rows } = await db.query(
    `SELECT * FROM ${listed.table}
      WHERE ${listed.condition}
        AND (created, id) > (SELECT created, id FROM ${listed.table} WHERE id = $2::text)
      ORDER BY created ASC, id ASC LIMIT $1::int`,
    [limit, cursor, ...listed.values],
  );
  return rows as Row[];
}

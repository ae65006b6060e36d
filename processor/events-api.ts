import { type Answer, resourceMissing } from './answers.js';
import { EVENTS } from './events.js';
import type { FormObject } from './form-body.js';
import { listPage, pageRequestOf } from './pagination.js';
import { optionalString, rejectUnknownParams } from './params.js';
import type { Queryable } from './transaction.js';

/** `GET /v1/events/:id` and `GET /v1/events` (newest first, optionally of one `type`). */

interface EventRow {
  body: string;
}

export async function retrieveEvent(db: Queryable, id: string, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['expand']);
  const { rows } = await db.query(`SELECT body FROM ${EVENTS} WHERE id = $1::text`, [id]);
  if (!rows[0]) throw resourceMissing(404, 'id', `No such event: '${id}'`);
  return { status: 200, body: rows[0].body };
}

export async function listEvents(db: Queryable, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['type', 'limit', 'starting_after', 'ending_before', 'expand']);
  const page = pageRequestOf(params);
  const type = optionalString(params, 'type');
  const listed = type === undefined ? { table: EVENTS, condition: 'TRUE', values: [] } : { table: EVENTS, condition: 'type = $3::text', values: [type] };
  return listPage<EventRow>(db, listed, page, '/v1/events', (row) => JSON.parse(row.body));
}

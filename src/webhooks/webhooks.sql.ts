/** Statements of webhook endpoints (table `webhook_endpoints`, migration 1764700018000). */

export const ENDPOINT_COLUMNS = `
  id, url, event_types AS "eventTypes", created_at AS "createdAt", disabled_at AS "disabledAt"`;

/** A new endpoint $1 of client $2 (the route's transaction: the key's stored answer commits with it). */
export const INSERT_ENDPOINT = `
  INSERT INTO webhook_endpoints (id, client_id, url, event_types, secret) VALUES ($1::uuid, $2::text, $3::text, $4::text[], $5::text)
  RETURNING ${ENDPOINT_COLUMNS}`;

export const ENDPOINTS_OF_CLIENT = `
  SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE client_id = $1::text ORDER BY created_at, id LIMIT $2::int`;

export const ENDPOINT_BY_ID = `
  SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::text`;

/** Zero rows: not the client's, or already deleted. Its pending deliveries find no endpoint and end. */
export const DELETE_ENDPOINT = `
  DELETE FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::text RETURNING id`;

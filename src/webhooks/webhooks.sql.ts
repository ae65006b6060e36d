/** Statements of webhook endpoints (table `webhook_endpoints`, migration 1764700018000). */

export const ENDPOINT_COLUMNS = `
  id, url, event_types AS "eventTypes", created_at AS "createdAt", disabled_at AS "disabledAt"`;

// The advisory lock class of "registering an endpoint for a client" (the second key is the client's hash).
const REGISTRATION_LOCK_CLASS = 1764700018;

/**
 * Serialises registrations of client $1 until the transaction ends, so that INSERT_ENDPOINT's count
 * sees every endpoint committed before it. Race it prevents: N registrations at the cap, each
 * counting cap − 1 in its own snapshot and all inserting. A separate statement on purpose: a
 * statement's snapshot is taken before it runs, so a lock taken inside INSERT_ENDPOINT would be
 * granted after its count was already fixed. Other clients hash elsewhere (a collision only waits).
 */
export const LOCK_CLIENT_REGISTRATIONS = `
  SELECT pg_advisory_xact_lock(${REGISTRATION_LOCK_CLASS}, hashtext($1::text)) IS NULL AS locked`;

/**
 * A new endpoint $1 of client $2 while the client has fewer than $6 (the route's transaction: the
 * key's stored answer commits with it). Run after LOCK_CLIENT_REGISTRATIONS. Zero rows: at the cap.
 */
export const INSERT_ENDPOINT = `
  INSERT INTO webhook_endpoints (id, client_id, url, event_types, secret)
  SELECT $1::uuid, $2::text, $3::text, $4::text[], $5::text
   WHERE (SELECT count(*) FROM webhook_endpoints WHERE client_id = $2::text) < $6::int
  RETURNING ${ENDPOINT_COLUMNS}`;

/** Client $1's endpoints, oldest first, $2 at most: the first page of GET /webhooks. */
export const ENDPOINTS_OF_CLIENT = `
  SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE client_id = $1::text ORDER BY created_at, id LIMIT $2::int`;

/**
 * As ENDPOINTS_OF_CLIENT, after the client's endpoint $3 (the cursor `desde`) in (created_at, id)
 * order. An empty page when $3 is not the client's: the service asks ENDPOINT_BY_ID first, to
 * tell an unknown cursor from the end of the list.
 */
export const ENDPOINTS_OF_CLIENT_AFTER = `
  SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
   WHERE client_id = $1::text AND (created_at, id) > (SELECT created_at, id FROM webhook_endpoints WHERE id = $3::uuid AND client_id = $1::text)
   ORDER BY created_at, id
   LIMIT $2::int`;

export const ENDPOINT_BY_ID = `
  SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::text`;

/** Zero rows: not the client's, or already deleted. Its pending deliveries find no endpoint and end. */
export const DELETE_ENDPOINT = `
  DELETE FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::text RETURNING id`;

/**
 * Statements of webhook deliveries (table `webhook_deliveries`, migration 1764700019000). Partitioned by
 * the UTC day of their event's creation, `event_created_at` (migration 1764700030500): a join to the
 * event names both its id and that day, so only the event's own partition is read. No foreign key to
 * the event (see the migration): the purge drops a day's deliveries before the day's events.
 */

/**
 * Up to $1 committed events not fanned out yet, oldest first, marked fanned out in the relay's
 * transaction. Race: relays of every replica run at once; FOR UPDATE SKIP LOCKED gives each event to
 * one of them, and a relay that dies before COMMIT leaves its events unmarked for the next.
 */
export const TAKE_EVENTS_TO_FAN_OUT = `
  UPDATE eventos SET fanned_out_at = now()
   WHERE (id, created_at) IN (SELECT id, created_at FROM eventos WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT $1::int FOR UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * Fan-out of events $1: one delivery per active endpoint of each event's client subscribed to its
 * type. Race: an event fanned out twice (marked again by an operator, or by an old replica's fan-out
 * job during a rolling upgrade) inserts nothing the second time (ON CONFLICT on the primary key), so
 * RETURNING names only the deliveries to enqueue now.
 */
export const FAN_OUT_EVENTS = `
  INSERT INTO webhook_deliveries (event_id, endpoint_id, event_created_at)
  SELECT e.id, w.id, e.created_at FROM eventos e JOIN webhook_endpoints w ON w.client_id = e.client_id AND e.type = ANY (w.event_types)
   WHERE e.id = ANY ($1::text[]) AND w.disabled_at IS NULL
  ON CONFLICT DO NOTHING
  RETURNING event_id AS "eventId", endpoint_id AS "endpointId", (SELECT client_id FROM webhook_endpoints WHERE id = endpoint_id) AS "clientId"`;

/** What an attempt needs: the endpoint (gone when deleted), the stored body, the attempts so far. */
export const DELIVERY_TO_ATTEMPT = `
  SELECT d.attempts, d.delivered_at AS "deliveredAt", w.url, w.secret, w.disabled_at AS "disabledAt", e.payload::text AS payload, w.client_id AS "clientId"
    FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN eventos e ON e.id = d.event_id AND e.created_at = d.event_created_at
   WHERE d.event_id = $1::text AND d.endpoint_id = $2::uuid`;

/** Acknowledged (2xx): never attempted again. Zero rows: already acknowledged (a redelivery after a crash). */
export const MARK_DELIVERED = `
  UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $3::int, last_error = NULL, last_attempt_at = now(), delivered_at = now()
   WHERE event_id = $1::text AND endpoint_id = $2::uuid AND delivered_at IS NULL
  RETURNING extract(epoch FROM now() - event_created_at)::float8 AS "secondsSinceEvent"`;

/** An attempt failed (status $3 or none, error $4): counted, returning how many attempts have failed. */
export const MARK_FAILED = `
  UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $3::int, last_error = $4::text, last_attempt_at = now()
   WHERE event_id = $1::text AND endpoint_id = $2::uuid AND delivered_at IS NULL
  RETURNING attempts`;

/** The endpoint failed a whole schedule: disabled until an operator enables it. Its deliveries stay, for redelivery. */
export const DISABLE_ENDPOINT = `
  UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1::uuid AND disabled_at IS NULL`;

/** The oldest delivery not yet acknowledged (an index-only look at the partial index), in seconds. */
export const OLDEST_UNDELIVERED_SECONDS = `
  SELECT extract(epoch FROM now() - min(created_at))::float8 AS seconds FROM webhook_deliveries WHERE delivered_at IS NULL`;

/** Deliveries not yet acknowledged, oldest first, with their last error: what an operator looks at. */
export const FAILING_DELIVERIES = `
  SELECT d.event_id AS "eventId", e.type, e.client_id AS "clientId", d.endpoint_id AS "endpointId", w.url, d.attempts,
         d.last_status AS "lastStatus", d.last_error AS "lastError", d.last_attempt_at AS "lastAttemptAt", d.created_at AS "createdAt",
         w.disabled_at AS "disabledAt"
    FROM webhook_deliveries d JOIN eventos e ON e.id = d.event_id AND e.created_at = d.event_created_at JOIN webhook_endpoints w ON w.id = d.endpoint_id
   WHERE d.delivered_at IS NULL
   ORDER BY d.created_at, d.event_id
   LIMIT $1::int`;

/**
 * Event $1 to be delivered again to every active endpoint subscribed to it, acknowledged or not:
 * its deliveries start over (attempts 0). Zero rows: no such event, or nobody subscribed.
 */
export const RESTART_EVENT_DELIVERIES = `
  INSERT INTO webhook_deliveries AS d (event_id, endpoint_id, event_created_at)
  SELECT e.id, w.id, e.created_at FROM eventos e JOIN webhook_endpoints w ON w.client_id = e.client_id AND e.type = ANY (w.event_types)
   WHERE e.id = $1::text AND w.disabled_at IS NULL
  ON CONFLICT (event_id, endpoint_id, event_created_at) DO UPDATE SET attempts = 0, delivered_at = NULL, last_error = NULL, last_status = NULL
  RETURNING d.endpoint_id AS "endpointId", (SELECT client_id FROM eventos WHERE id = $1::text) AS "clientId"`;

export const EVENT_EXISTS = `SELECT 1 AS found FROM eventos WHERE id = $1::text`;

/** A disabled endpoint $1 enabled again. Zero rows: no such endpoint, or it was not disabled. */
export const ENABLE_ENDPOINT = `
  UPDATE webhook_endpoints SET disabled_at = NULL WHERE id = $1::uuid AND disabled_at IS NOT NULL RETURNING id`;

/** The backlog of endpoint $1 starts its schedule over (an operator enabled it again). */
export const RESTART_ENDPOINT_DELIVERIES = `
  UPDATE webhook_deliveries SET attempts = 0 WHERE endpoint_id = $1::uuid AND delivered_at IS NULL
  RETURNING event_id AS "eventId", (SELECT client_id FROM webhook_endpoints WHERE id = $1::uuid) AS "clientId"`;

/**
 * Injection token: where the process opens the connections that keep session state (the LISTEN
 * connection, the partition purge's advisory lock). PostgreSQL itself, never a transaction-mode
 * pooler, which runs a session's statements on whichever server connection is free:
 * DATABASE_LISTEN_URL, else DATABASE_URL.
 */
export const SESSION_DATABASE_URL = Symbol('SESSION_DATABASE_URL');

import { QueryRunnerAlreadyReleasedError } from 'typeorm';
/** SQLSTATE codes this service reacts to, by name (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
export const SQLSTATE = {
  undefinedTable: '42P01',
  uniqueViolation: '23505',
  checkViolation: '23514',
  readOnlySqlTransaction: '25006',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  objectNotInPrerequisiteState: '55000',
  lockNotAvailable: '55P03',
  queryCanceled: '57014',
  adminShutdown: '57P01',
  crashShutdown: '57P02',
  cannotConnectNow: '57P03',
  tooManyConnections: '53300',
} as const;

/**
 * Raised by a write queued without waiting for it (`Transaction.send`) when the state it was decided
 * from has moved on (another process wrote first): its transaction rolls back, and the work that
 * queued it may run again from what is there now. Our own code, in our own class `SU`.
 */
export const SUPERSEDED_SQLSTATE = 'SU001';

export function isSuperseded(error: unknown): boolean {
  return sqlStateOf(error) === SUPERSEDED_SQLSTATE;
}

/** What `writing` resolves with or, when it was superseded (somebody else wrote first), what `current` reads now. */
export async function unlessSuperseded<T>(writing: Promise<T>, current: () => Promise<T>): Promise<T> {
  try {
    return await writing;
  } catch (error) {
    if (!isSuperseded(error)) throw error;
    return current();
  }
}

const CONNECTION_EXCEPTION_CLASS = '08';
const UNAVAILABLE_SQLSTATES = new Set<string>([
  // A write on a standby: mid-failover the stable address led to a node that is not (or no longer) the primary.
  SQLSTATE.readOnlySqlTransaction,
  SQLSTATE.adminShutdown,
  SQLSTATE.crashShutdown,
  SQLSTATE.cannotConnectNow,
  SQLSTATE.tooManyConnections,
]);
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/** The SQLSTATE of a driver error, also when TypeORM wrapped it in a QueryFailedError. */
export function sqlStateOf(error: unknown): string | undefined {
  const candidate = (error as { driverError?: { code?: unknown }; code?: unknown } | null)?.driverError ?? error;
  const code = (candidate as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * True when the database could not be reached or went away, so the client should retry later (503),
 * as opposed to a statement that failed on a healthy connection.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  // TypeORM releases a query runner whose connection died; the next statement on it lands here.
  if (error instanceof QueryRunnerAlreadyReleasedError) return true;
  const code = sqlStateOf(error);
  if (code !== undefined) {
    return code.startsWith(CONNECTION_EXCEPTION_CLASS) || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code);
  }
  return isConnectionLossWithoutCode(error);
}

// node-postgres raises these without any code; matching its fixed messages is the only way to tell.
// The last two: a statement sent on a client whose connection already failed (a transaction's, mid-failover).
const CODELESS_CONNECTION_ERRORS = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

function isConnectionLossWithoutCode(error: unknown): boolean {
  const cause = (error as { driverError?: unknown } | null)?.driverError ?? error;
  return cause instanceof Error && CODELESS_CONNECTION_ERRORS.some((prefix) => cause.message.startsWith(prefix));
}

export interface EventosOptions {
  /** Events are kept at least this many days (EVENTS_TTL_DAYS), then purged. */
  readonly ttlDays: number;
  /** When the purge runs (the keys' purge schedule). */
  readonly purgeCron: string;
}

export const EVENTOS_OPTIONS = Symbol('EVENTOS_OPTIONS');

import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** Mirrors the CHECK on `idempotency_keys.status`. */
export const KEY_STATUSES = ['in_flight', 'released', 'completed'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/**
 * One idempotency key of one scope: its claim while the first attempt runs, then the stored answer.
 * The schema is in migrations/; the transitions are in `idempotency.sql.ts`. (scope, key) identifies the
 * key's live row; in the table, partitioned by expiry day, it is not a primary key, and expired rows of
 * the key may remain until their day's partition is dropped (migration 1764700028500).
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKeyRecord {
  @PrimaryColumn({ type: 'text' })
  scope!: string;

  @PrimaryColumn({ type: 'text' })
  key!: string;

  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash!: string;

  @Column({ type: 'text' })
  status!: KeyStatus;

  @Column({ name: 'operation_id', type: 'uuid' })
  operationId!: string;

  @Column({ name: 'lock_token', type: 'uuid', nullable: true })
  lockToken!: string | null;

  @Column({ name: 'locked_at', type: 'timestamptz', nullable: true })
  lockedAt!: Date | null;

  @Column({ name: 'response_status', type: 'smallint', nullable: true })
  responseStatus!: number | null;

  @Column({ name: 'response_headers', type: 'jsonb', nullable: true })
  responseHeaders!: Record<string, string> | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  /** Set by a waiting duplicate (MARK_KEY_WAITED): only then does settling the key send a notification. */
  @Column({ name: 'has_waiters', type: 'boolean', default: false })
  hasWaiters!: boolean;
}

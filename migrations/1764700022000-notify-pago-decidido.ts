import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Announces on channel `pago_decidido` the id of every payment that a request waits on
 * (`GET /pagos/{id}` with `Prefer: wait`) when its `estado` leaves PENDIENTE or
 * REQUIERE_AUTENTICACION: decided (APROBADO, RECHAZADO, FALLIDO), or handed to the customer
 * (PENDIENTE → REQUIERE_AUTENTICACION, which only makes the waiter read again). A trigger rather than
 * a NOTIFY beside each statement: the route, the processor's webhooks, the reconciler and the operator
 * all decide payments, and PostgreSQL delivers the notification only when that transaction commits.
 * Only for marked rows (`esperado`), as for idempotency keys (migration 1764700013000): a NOTIFY
 * serialises the commits of every transaction that sends one (~10% CPU, ~17% throughput measured
 * there when every settlement notified), and almost no payment is waited on. The mark is set by the
 * waiter before it reads the payment (MARCAR_PAGO_ESPERADO in pagos/esperas.sql.ts says why no
 * decision slips between the two) and never cleared. Payload: the id (36 characters).
 * A rolling deploy: replicas still on the previous build don't wait at all, and their decisions
 * notify through this trigger all the same.
 */
export class NotifyPagoDecidido1764700022000 implements MigrationInterface {
  name = 'NotifyPagoDecidido1764700022000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pagos ADD COLUMN esperado boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`
      CREATE FUNCTION pago_decidido_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('pago_decidido', NEW.id::text);
        RETURN NULL;
      END
      $$`);
    // OF estado: the waiter's own mark, refunds and every other write leave it unevaluated.
    await queryRunner.query(`
      CREATE TRIGGER pago_decidido
        AFTER UPDATE OF estado ON pagos
        FOR EACH ROW
        WHEN (NEW.esperado AND OLD.estado IN ('PENDIENTE', 'REQUIERE_AUTENTICACION') AND NEW.estado IS DISTINCT FROM OLD.estado)
        EXECUTE FUNCTION pago_decidido_notify()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER pago_decidido ON pagos`);
    await queryRunner.query(`DROP FUNCTION pago_decidido_notify()`);
    await queryRunner.query(`ALTER TABLE pagos DROP COLUMN esperado`);
  }
}

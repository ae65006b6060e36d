import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A payment settles in one round trip: the route computes the settled payment itself and queues its
 * settlement, its event, the stored answer and COMMIT without waiting for any of them.
 * - `pagos_iniciar` also returns `creado_en`, the one column of the answer the route can't know.
 * - `pagos_asentar` moves a PENDIENTE payment to the state given and returns nothing; when the
 *   payment is no longer PENDIENTE (a webhook or another attempt settled it meanwhile) it raises
 *   SQLSTATE SU001 (superseded), so that the transaction queued behind it rolls back instead of
 *   committing an answer and an event for a settlement that did not happen.
 */
export class SettlePagoInOneRoundTrip1764700026000 implements MigrationInterface {
  name = 'SettlePagoInOneRoundTrip1764700026000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION pagos_iniciar(uuid, text, text, text, bigint, text)`);
    await queryRunner.query(`
      CREATE FUNCTION pagos_iniciar(
        p_id uuid, p_client_id text, p_operation_id text, p_numero_orden text, p_monto bigint, p_moneda text
      ) RETURNS TABLE (id uuid, monto text, moneda text, nuevo boolean, "creadoEn" timestamptz) LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        INSERT INTO pagos AS p (id, client_id, operation_id, numero_orden, monto, moneda, estado)
        VALUES (p_id, p_client_id, p_operation_id, p_numero_orden, p_monto, p_moneda::char(3), 'PENDIENTE')
        ON CONFLICT (operation_id) DO UPDATE SET estado = 'PENDIENTE', actualizado_en = now()
         WHERE p.estado IN ('FALLIDO', 'PENDIENTE')
        RETURNING p.id, p.monto::text, p.moneda::text, (p.xmax = 0), p.creado_en;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION pagos_asentar(
        p_id uuid, p_estado text, p_gateway_charge_id text, p_motivo text, p_client_secret text, p_autenticacion_expira_en timestamptz
      ) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        UPDATE pagos SET estado = p_estado, gateway_charge_id = p_gateway_charge_id, motivo = p_motivo, client_secret = p_client_secret,
               autenticacion_expira_en = p_autenticacion_expira_en, actualizado_en = now()
         WHERE id = p_id AND estado = 'PENDIENTE';
        IF NOT FOUND THEN
          RAISE EXCEPTION 'payment % is no longer PENDIENTE', p_id USING ERRCODE = 'SU001';
        END IF;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION pagos_asentar(uuid, text, text, text, text, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION pagos_iniciar(uuid, text, text, text, bigint, text)`);
    await queryRunner.query(`
      CREATE FUNCTION pagos_iniciar(
        p_id uuid, p_client_id text, p_operation_id text, p_numero_orden text, p_monto bigint, p_moneda text
      ) RETURNS TABLE (id uuid, monto text, moneda text, nuevo boolean) LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        INSERT INTO pagos AS p (id, client_id, operation_id, numero_orden, monto, moneda, estado)
        VALUES (p_id, p_client_id, p_operation_id, p_numero_orden, p_monto, p_moneda::char(3), 'PENDIENTE')
        ON CONFLICT (operation_id) DO UPDATE SET estado = 'PENDIENTE', actualizado_en = now()
         WHERE p.estado IN ('FALLIDO', 'PENDIENTE')
        RETURNING p.id, p.monto::text, p.moneda::text, (p.xmax = 0);
      END $$`);
  }
}

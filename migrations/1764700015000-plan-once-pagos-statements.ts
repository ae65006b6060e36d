import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two writes of every payment, INICIAR_PAGO and CERRAR_PAGO (`pagos.sql.ts` documents them), as
 * PL/pgSQL functions that plan their statement once per connection, for the reason migration
 * 1764700014000 gives. Same statements, same errors: the partial unique index still raises 23505
 * out of `pagos_iniciar` when another operation holds the order.
 */
export class PlanOncePagosStatements1764700015000 implements MigrationInterface {
  name = 'PlanOncePagosStatements1764700015000';

  async up(queryRunner: QueryRunner): Promise<void> {
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
    await queryRunner.query(`
      CREATE FUNCTION pagos_cerrar(p_id uuid, p_estado text, p_gateway_charge_id text)
      RETURNS TABLE (
        id uuid, "numeroOrden" text, monto text, moneda text, "montoReembolsado" text, estado text, "creadoEn" timestamptz
      ) LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        UPDATE pagos AS p SET estado = p_estado, gateway_charge_id = p_gateway_charge_id, actualizado_en = now()
         WHERE p.id = p_id AND p.estado = 'PENDIENTE'
        RETURNING p.id, p.numero_orden, p.monto::text, p.moneda::text, p.monto_reembolsado::text, p.estado, p.creado_en;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION pagos_cerrar(uuid, text, text)`);
    await queryRunner.query(`DROP FUNCTION pagos_iniciar(uuid, text, text, text, bigint, text)`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payments that wait for the customer (3-D Secure), and why a payment was declined.
 * - `REQUIERE_AUTENTICACION`: the intent is `requires_action`; nothing charged yet. It holds its
 *   order like PENDIENTE does (the partial unique index), so another key can't charge it meanwhile.
 * - `client_secret`: what the app hands to Stripe's SDK while it waits; cleared when it settles.
 * - `autenticacion_expira_en`: when the reconciler gives up on the customer and cancels the intent.
 * - `motivo`: why a RECHAZADO payment was declined (the card, a failed or abandoned authentication,
 *   a spent token, an amount the processor refuses); null for every other state.
 * `pagos_cerrar` gains the motivo and returns what the answer shows now.
 */
export class PagosAutenticacion1764700021000 implements MigrationInterface {
  name = 'PagosAutenticacion1764700021000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE pagos
        DROP CONSTRAINT pagos_estado_check,
        ADD CONSTRAINT pagos_estado_check CHECK (estado IN ('PENDIENTE', 'REQUIERE_AUTENTICACION', 'APROBADO', 'RECHAZADO', 'FALLIDO')),
        ADD COLUMN motivo text CHECK (motivo IN ('tarjeta', 'autenticacion', 'autenticacion-abandonada', 'token-usado', 'importe-no-admitido')),
        ADD COLUMN client_secret text,
        ADD COLUMN autenticacion_expira_en timestamptz,
        ADD CONSTRAINT pagos_motivo_solo_rechazado CHECK ((estado = 'RECHAZADO') = (motivo IS NOT NULL)) NOT VALID,
        ADD CONSTRAINT pagos_autenticacion_completa CHECK (estado <> 'REQUIERE_AUTENTICACION' OR (client_secret IS NOT NULL AND autenticacion_expira_en IS NOT NULL))`);
    // Declined before this migration: by the card as far as anyone can tell now (a 3-D Secure card was declined too).
    await queryRunner.query(`UPDATE pagos SET motivo = 'tarjeta' WHERE estado = 'RECHAZADO'`);
    await queryRunner.query(`ALTER TABLE pagos VALIDATE CONSTRAINT pagos_motivo_solo_rechazado`);
    await queryRunner.query(`DROP INDEX pagos_orden_activa_uidx`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX pagos_orden_activa_uidx ON pagos (client_id, numero_orden)
      WHERE estado IN ('PENDIENTE', 'REQUIERE_AUTENTICACION', 'APROBADO')`);
    // Few at any time, like PENDIENTE: the reconciler walks them by id.
    await queryRunner.query(`CREATE INDEX pagos_esperando_autenticacion_idx ON pagos (id) WHERE estado = 'REQUIERE_AUTENTICACION'`);
    // A webhook names the intent: which payment is it? (null until an intent is recorded, so partial).
    await queryRunner.query(`CREATE INDEX pagos_gateway_charge_id_idx ON pagos (gateway_charge_id) WHERE gateway_charge_id IS NOT NULL`);
    await queryRunner.query(`DROP FUNCTION pagos_cerrar(uuid, text, text)`);
    await queryRunner.query(`
      CREATE FUNCTION pagos_cerrar(p_id uuid, p_estado text, p_gateway_charge_id text, p_motivo text)
      RETURNS TABLE (
        id uuid, "numeroOrden" text, monto text, moneda text, "montoReembolsado" text, estado text, motivo text, "creadoEn" timestamptz
      ) LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        UPDATE pagos AS p SET estado = p_estado, gateway_charge_id = p_gateway_charge_id, motivo = p_motivo, actualizado_en = now()
         WHERE p.id = p_id AND p.estado = 'PENDIENTE'
        RETURNING p.id, p.numero_orden, p.monto::text, p.moneda::text, p.monto_reembolsado::text, p.estado, p.motivo, p.creado_en;
      END $$`);
    // Processor events (Stripe's webhooks) already applied, by the processor's event id: a redelivery changes nothing.
    await queryRunner.query(`
      CREATE TABLE eventos_procesador (
        id          text        PRIMARY KEY CHECK (char_length(id) <= 255),
        tipo        text        NOT NULL,
        recibido_en timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX eventos_procesador_recibido_en ON eventos_procesador (recibido_en)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE eventos_procesador`);
    await queryRunner.query(`DROP FUNCTION pagos_cerrar(uuid, text, text, text)`);
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
    await queryRunner.query(`DROP INDEX pagos_gateway_charge_id_idx`);
    await queryRunner.query(`DROP INDEX pagos_esperando_autenticacion_idx`);
    await queryRunner.query(`DROP INDEX pagos_orden_activa_uidx`);
    await queryRunner.query(`DELETE FROM pagos WHERE estado = 'REQUIERE_AUTENTICACION'`);
    await queryRunner.query(`CREATE UNIQUE INDEX pagos_orden_activa_uidx ON pagos (client_id, numero_orden) WHERE estado IN ('PENDIENTE', 'APROBADO')`);
    await queryRunner.query(`
      ALTER TABLE pagos
        DROP CONSTRAINT pagos_autenticacion_completa,
        DROP CONSTRAINT pagos_motivo_solo_rechazado,
        DROP COLUMN autenticacion_expira_en,
        DROP COLUMN client_secret,
        DROP COLUMN motivo,
        DROP CONSTRAINT pagos_estado_check,
        ADD CONSTRAINT pagos_estado_check CHECK (estado IN ('PENDIENTE', 'APROBADO', 'RECHAZADO', 'FALLIDO'))`);
  }
}

import type pg from 'pg';

/** How many charges the simulated processor made: the number that must never exceed the operations. */
export async function countCharges(db: pg.Client, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM simulated_gateway_charges WHERE ${where}`, params);
  return rows[0].n;
}

export async function countPagos(db: pg.Client, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM pagos WHERE ${where}`, params);
  return rows[0].n;
}

export async function keyRow(db: pg.Client, scope: string, key: string): Promise<Record<string, any> | undefined> {
  const { rows } = await db.query('SELECT * FROM idempotency_keys WHERE scope = $1 AND key = $2', [scope, key]);
  return rows[0];
}

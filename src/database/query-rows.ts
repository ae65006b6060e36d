import type { EntityManager } from 'typeorm';

/**
 * Runs one parameterised statement and returns its rows. TypeORM answers UPDATE and DELETE with
 * `[rows, rowCount]` and everything else with `rows`; callers here always want the rows (RETURNING).
 */
export async function queryRows<Row>(manager: EntityManager, sql: string, parameters: readonly unknown[]): Promise<Row[]> {
  const result: unknown = await manager.query(sql, [...parameters]);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as Row[];
  }
  return result as Row[];
}

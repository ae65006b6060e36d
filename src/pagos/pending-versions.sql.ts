/**
 * The two statements every reconciled table shares (`pagos`, `reembolsos`: rows PENDIENTE with an
 * `actualizado_en` version that every write of the reconciler is conditional on). `tabla` comes from
 * the constants of the callers, never from input.
 */
export type TablaConciliable = 'pagos' | 'reembolsos';

/**
 * PENDIENTE at version $2 → PENDIENTE at a new version (actualizado_en = now()), returned: one
 * reconciler reserves the row before it touches its operation's claim.
 * Race: two reconcilers (replicas) read the same version; the first UPDATE changes it and the other
 * re-checks the WHERE against that and gets no row, so only one goes on to the claim and the processor.
 * Zero rows: somebody else reserved, resumed (which renews actualizado_en) or settled it.
 */
export function reservarPendiente(tabla: TablaConciliable): string {
  return `
  UPDATE ${tabla} SET actualizado_en = now()
   WHERE id = $1::uuid AND estado = 'PENDIENTE' AND actualizado_en = $2::timestamptz
  RETURNING actualizado_en::text AS version`;
}

/**
 * PENDIENTE at our reservation's version $2 → PENDIENTE at version $3 again: the reconciler leaves a
 * row as it found it (a live attempt holds its claim, or the processor could not be asked), so
 * the next pass looks at it again. Zero rows: somebody touched it since; their version stands.
 */
export function devolverPendiente(tabla: TablaConciliable): string {
  return `
  UPDATE ${tabla} SET actualizado_en = $3::timestamptz
   WHERE id = $1::uuid AND estado = 'PENDIENTE' AND actualizado_en = $2::timestamptz
  RETURNING 1 AS devuelto`;
}

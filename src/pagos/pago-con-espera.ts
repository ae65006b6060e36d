import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { untilClientHangsUp } from '../http/client-hang-up.js';
import { PREFERENCE_APPLIED_HEADER, preferredWaitOf } from '../http/prefer-wait.js';
import { EsperasDePago } from './esperas-de-pago.js';
import { ESTADOS_EN_CURSO, type Pago } from './pago.entity.js';
import { PagosService } from './pagos.service.js';

// The longest `Prefer: wait` granted: mobile HTTP clients give up on a request after about a minute
// (URLSession's and OkHttp's usual timeouts), so a longer wait would answer nobody.
export const ESPERA_MAXIMA_SEGUNDOS = 60;

/**
 * `GET /pagos/{id}` with `Prefer: wait=N` (RFC 7240): an app that just handed the customer to 3-D
 * Secure asks once instead of polling. While the payment is PENDIENTE or REQUIERE_AUTENTICACION the
 * request waits, woken by the `pago_decidido` notification (PENDIENTE → REQUIERE_AUTENTICACION only
 * makes it read again), up to min(N, 60) s, the client hanging up or shutdown; then it answers the
 * payment as it is. `Preference-Applied: wait=N` only when it did wait: a payment already decided, an
 * unknown id or a full waiting room answer at once, with no preference applied.
 */
@Injectable()
export class PagoConEspera {
  constructor(
    private readonly pagos: PagosService,
    private readonly esperas: EsperasDePago,
  ) {}

  async leer(clientId: string, id: string, request: FastifyRequest, reply: FastifyReply): Promise<Pago | null> {
    const seconds = Math.min(preferredWaitOf(request) ?? 0, ESPERA_MAXIMA_SEGUNDOS);
    if (seconds === 0 || !this.esperas.enter()) return this.pagos.findOne(clientId, id);
    try {
      const deadline = performance.now() + seconds * 1000;
      // Mark, then read: a decision the read misses came after the mark, so it is notified
      // (MARCAR_PAGO_ESPERADO). The first mark returns the payment itself.
      const leer = async (): Promise<Pago | null> => (await this.pagos.marcarEsperado(clientId, id)) ?? this.pagos.findOne(clientId, id);
      const { value, waited } = await untilClientHangsUp(reply, (hungUp) => this.esperas.readUntil(id, leer, decidido, deadline, hungUp));
      if (waited) reply.header(PREFERENCE_APPLIED_HEADER, `wait=${seconds}`);
      return value;
    } finally {
      this.esperas.leave();
    }
  }
}

/** Nothing more to wait for: decided, or not the caller's payment at all. */
function decidido(pago: Pago | null): boolean {
  return pago === null || !ESTADOS_EN_CURSO.includes(pago.estado);
}

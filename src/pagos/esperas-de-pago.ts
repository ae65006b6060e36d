import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfigService } from '../config/app-config.js';
import { NotificationListener } from '../database/notification-listener.js';
import { NotificationWaiters } from '../database/notification-waiters.js';

/** Where PostgreSQL announces the id of a waited payment whose `estado` leaves an in-course state (migration 1764700022000). */
export const CANAL_PAGO_DECIDIDO = 'pago_decidido';

/**
 * The requests of this process waiting for a payment's outcome (`GET /pagos/{id}` with `Prefer:
 * wait`), by payment id, subscribed to `pago_decidido` on the process's LISTEN connection; while it
 * is down they poll. At most IDEMPOTENCY_MAX_WAITERS at once, counted apart from the idempotency
 * mechanism's duplicates: the same bound on waiting sockets, for the same reasons (memory, file
 * descriptors, and the burst of re-reads on the pool when many wake together).
 */
@Injectable()
export class EsperasDePago extends NotificationWaiters implements OnModuleInit {
  constructor(
    private readonly listener: NotificationListener,
    @Inject(ConfigService) config: AppConfigService,
  ) {
    super(config.get('idempotency', { infer: true }).waiting.maxWaiters);
  }

  /** Before any `onApplicationBootstrap`: the listener connects then, with every channel subscribed. */
  onModuleInit(): void {
    this.listener.subscribe(CANAL_PAGO_DECIDIDO, this);
  }
}

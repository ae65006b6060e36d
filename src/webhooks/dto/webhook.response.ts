import { ApiProperty } from '@nestjs/swagger';
import type { WebhookEndpoint } from '../webhook-endpoint.js';

/** A webhook endpoint as the API shows it (never its secret, except once, when it is created). */
export class WebhookResponse {
  @ApiProperty({ format: 'uuid', example: '7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6' })
  readonly id!: string;

  @ApiProperty({ example: 'https://tienda.example/webhooks/pagos' })
  readonly url!: string;

  @ApiProperty({ type: [String], example: ['pago.aprobado', 'pago.rechazado'] })
  readonly eventos!: string[];

  @ApiProperty({ enum: ['ACTIVO', 'DESHABILITADO'], description: 'DESHABILITADO: it failed every attempt of the retry schedule; its events are kept (GET /eventos) until an operator enables it again.', example: 'ACTIVO' })
  readonly estado!: 'ACTIVO' | 'DESHABILITADO';

  @ApiProperty({ format: 'date-time', example: '2026-12-04T17:02:11.120Z' })
  readonly creadoEn!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  readonly deshabilitadoEn!: string | null;
}

/** The answer of `POST /webhooks`: the only one that carries the secret. */
export class WebhookCreadoResponse extends WebhookResponse {
  @ApiProperty({ description: 'Verifies the signature of every delivery (Standard Webhooks). Shown only here (and in replays of this request\'s Idempotency-Key).', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  readonly secreto!: string;
}

export function toWebhookResponse(endpoint: WebhookEndpoint): WebhookResponse {
  return {
    id: endpoint.id,
    url: endpoint.url,
    eventos: endpoint.eventTypes,
    estado: endpoint.disabledAt ? 'DESHABILITADO' : 'ACTIVO',
    creadoEn: endpoint.createdAt.toISOString(),
    deshabilitadoEn: endpoint.disabledAt?.toISOString() ?? null,
  };
}

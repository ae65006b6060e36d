import { ApiProperty } from '@nestjs/swagger';

/** An event as the feed and every webhook delivery carry it (Standard Webhooks' payload, plus its id). */
export class EventoResponse {
  @ApiProperty({ description: 'Never changes; every delivery carries it as `webhook-id`: deduplicate by it.', example: 'evt_8f14e45fceea467a9b6c2f1e0d3c4b5a' })
  readonly id!: string;

  @ApiProperty({ enum: ['pago.aprobado', 'pago.rechazado', 'pago.fallido', 'reembolso.aprobado', 'reembolso.fallido'], example: 'pago.aprobado' })
  readonly type!: string;

  @ApiProperty({ format: 'date-time', description: 'When the change was written.', example: '2026-12-04T17:02:11.120Z' })
  readonly timestamp!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The payment or refund exactly as `GET` shows it at that moment.' })
  readonly data!: Record<string, unknown>;
}

import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';

export class ListarPagosQuery {
  @ApiPropertyOptional({ description: 'Only the payments of this order.', pattern: '^[A-Za-z0-9._-]{1,64}$', example: 'ORD-1001' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, { message: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
  numeroOrden?: string;
}

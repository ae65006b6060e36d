import { IsOptional, Matches } from 'class-validator';

export class ListarPagosQuery {
  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, { message: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
  numeroOrden?: string;
}

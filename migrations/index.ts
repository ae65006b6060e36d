import { CreateIdempotencyKeys1764700000000 } from './1764700000000-create-idempotency-keys.js';
import { CreatePagos1764700001000 } from './1764700001000-create-pagos.js';
import { CreateSimulatedGatewayCharges1764700002000 } from './1764700002000-create-simulated-gateway-charges.js';
import { CreateIdempotencyClaimLostFunction1764700003500 } from './1764700003500-create-idempotency-claim-lost-function.js';

/** Every migration in order; listed explicitly so the built app and the ESM tests load the same set. */
export const MIGRATIONS = [
  CreateIdempotencyKeys1764700000000,
  CreatePagos1764700001000,
  CreateSimulatedGatewayCharges1764700002000,
  CreateIdempotencyClaimLostFunction1764700003500,
];

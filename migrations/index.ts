import { CreateIdempotencyKeys1764700000000 } from './1764700000000-create-idempotency-keys.js';
import { CreatePagos1764700001000 } from './1764700001000-create-pagos.js';
import { CreateSimulatedGatewayCharges1764700002000 } from './1764700002000-create-simulated-gateway-charges.js';
import { ReconcilerIndexes1764700003000 } from './1764700003000-reconciler-indexes.js';
import { CreateIdempotencyClaimLostFunction1764700003500 } from './1764700003500-create-idempotency-claim-lost-function.js';
import { CreateReembolsos1764700004000 } from './1764700004000-create-reembolsos.js';
import { NotifyIdempotencyKeySettled1764700012000 } from './1764700012000-notify-idempotency-key-settled.js';
import { NotifyOnlyWaitedKeys1764700013000 } from './1764700013000-notify-only-waited-keys.js';
import { PlanOnceIdempotencyStatements1764700014000 } from './1764700014000-plan-once-idempotency-statements.js';
import { PlanOncePagosStatements1764700015000 } from './1764700015000-plan-once-pagos-statements.js';
import { ProcessorIntents1764700016000 } from './1764700016000-processor-intents.js';
import { CreateEventos1764700017000 } from './1764700017000-create-eventos.js';
import { CreateWebhookEndpoints1764700018000 } from './1764700018000-create-webhook-endpoints.js';
import { CreateWebhookDeliveries1764700019000 } from './1764700019000-create-webhook-deliveries.js';
import { InstallPgBoss1764700020000 } from './1764700020000-install-pg-boss.js';
import { PagosAutenticacion1764700021000 } from './1764700021000-pagos-autenticacion.js';
import { NotifyPagoDecidido1764700022000 } from './1764700022000-notify-pago-decidido.js';
import { ReembolsosGatewayRefundId1764700023000 } from './1764700023000-reembolsos-gateway-refund-id.js';
import { PagosClientCreadoIndex1764700024000 } from './1764700024000-pagos-client-creado-index.js';
import { OutboxRelay1764700025000 } from './1764700025000-outbox-relay.js';
import { SettlePagoInOneRoundTrip1764700026000 } from './1764700026000-settle-pago-in-one-round-trip.js';
import { SupersededUnless1764700027000 } from './1764700027000-superseded-unless.js';
import { PrepareIdempotencyKeysForPartitions1764700028000 } from './1764700028000-prepare-idempotency-keys-for-partitions.js';
import { PartitionIdempotencyKeys1764700028500 } from './1764700028500-partition-idempotency-keys.js';
import { DailyPartitionFunctions1764700029000 } from './1764700029000-daily-partition-functions.js';
import { PrepareEventosAndDeliveriesForPartitions1764700030000 } from './1764700030000-prepare-eventos-and-deliveries-for-partitions.js';
import { PartitionEventosAndDeliveries1764700030500 } from './1764700030500-partition-eventos-and-deliveries.js';
import { ClaimKeyWithExpiry1764700031000 } from './1764700031000-claim-key-with-expiry.js';

/** Every migration in order; listed explicitly so the built app and the ESM tests load the same set. */
export const MIGRATIONS = [
  CreateIdempotencyKeys1764700000000,
  CreatePagos1764700001000,
  CreateSimulatedGatewayCharges1764700002000,
  ReconcilerIndexes1764700003000,
  CreateIdempotencyClaimLostFunction1764700003500,
  CreateReembolsos1764700004000,
  NotifyIdempotencyKeySettled1764700012000,
  NotifyOnlyWaitedKeys1764700013000,
  PlanOnceIdempotencyStatements1764700014000,
  PlanOncePagosStatements1764700015000,
  ProcessorIntents1764700016000,
  CreateEventos1764700017000,
  CreateWebhookEndpoints1764700018000,
  CreateWebhookDeliveries1764700019000,
  InstallPgBoss1764700020000,
  PagosAutenticacion1764700021000,
  NotifyPagoDecidido1764700022000,
  ReembolsosGatewayRefundId1764700023000,
  PagosClientCreadoIndex1764700024000,
  OutboxRelay1764700025000,
  SettlePagoInOneRoundTrip1764700026000,
  SupersededUnless1764700027000,
  PrepareIdempotencyKeysForPartitions1764700028000,
  PartitionIdempotencyKeys1764700028500,
  DailyPartitionFunctions1764700029000,
  PrepareEventosAndDeliveriesForPartitions1764700030000,
  PartitionEventosAndDeliveries1764700030500,
  ClaimKeyWithExpiry1764700031000,
];

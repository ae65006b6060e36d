import { freePort } from '../test/support/free-port.js';
import { startProcessorProcess } from '../test/support/processor-process.js';
import { ResponseDroppingProxy } from '../test/support/response-dropping-proxy.js';
import { RoundRobinProxy } from '../test/support/round-robin-proxy.js';
import { seededRandom } from '../test/support/seeded-random.js';
import { WebhookConsumer } from '../test/support/webhook-consumer.js';
import { runClient } from './client.js';
import { printVerdict } from './report.js';
import { type Merchant, recordFinalState, waitForDeliveries } from './final-state.js';
import { runFaults, sleep } from './faults.js';
import { parseSoakOptions } from './options.js';
import { Recorder, send } from './recorder.js';
import { Replica } from './replica.js';
import { createDatabase, dropDatabase, startServiceDatabase } from './service-database.js';

/**
 * `npm run soak -- [--duration 10m] [--seed n] [--clients 32] [--merchants 4] [--database-url …]`:
 * two replicas of the built service on a fresh database, the standalone processor with its fault
 * API, a webhook consumer and N clients spread over M merchants (API clients, each with its own
 * webhook endpoint) through seeded faults; then a quiet period, the final state, and the checker.
 */
const STRIPE_WEBHOOK_SECRET = `whsec_${Buffer.from('pagos-soak-stripe-webhooks').toString('base64')}`;
const LOCK_TIMEOUT_SECONDS = 5;
const EVENT_TYPES = ['pago.requiere_autenticacion', 'pago.aprobado', 'pago.rechazado', 'pago.fallido', 'reembolso.aprobado', 'reembolso.fallido'];
// Faults and drops at these rates keep most operations moving while every kind still happens often.
const DROP_AFTER_ANSWER = 0.03;
// Past this after the quiet period, an event still undelivered is a violation, not a backlog.
const DELIVERY_BACKLOG_CAP_MS = 10 * 60_000;

async function main(): Promise<void> {
  const options = parseSoakOptions(process.argv.slice(2));
  // Several merchants, as in production: one client's deliveries are capped (3 in flight), and 32 apps
  // of a single merchant settle more events than that cap delivers over an hour.
  const merchants: Merchant[] = Array.from({ length: options.merchants }, (_, m) => ({ name: `soak${m}`, token: `soak-token-${m}-0123456789abcdef` }));
  console.log(`soak: seed ${options.seed}, ${options.clients} clients of ${merchants.length} merchants for ${options.durationMs / 1000} s, history in ${options.history}`);
  const databaseName = `pagos_soak_${options.seed}_${Date.now()}`;
  const processorDatabaseUrl = await createDatabase(options.databaseUrl, databaseName);
  const serviceDatabase = await startServiceDatabase(options.databaseUrl, databaseName);
  onCrash.push(async () => console.log(`soak: kept the service's data in ${await serviceDatabase.close(true)}`));
  const recorder = new Recorder(options.history);
  // Apart, so that the fault schedule doesn't depend on how many answers the proxy saw first.
  const faultRandom = seededRandom(options.seed);
  const dropRandom = seededRandom(options.seed + 0x9e3779b9);
  const processor = await startProcessorProcess(processorDatabaseUrl, { PROCESSOR_WEBHOOK_RETRY_BASE_MS: '200', PROCESSOR_WEBHOOK_RETRY_MAX_MS: '2000' });
  const env = {
    NODE_ENV: 'test', DATABASE_URL: serviceDatabase.url, API_TOKENS: merchants.map(({ name, token }) => `${name}:${token}`).join(','), ...processor.serviceEnv, STRIPE_WEBHOOK_SECRET,
    WEBHOOKS_ALLOW_INSECURE_URLS: 'true', RATE_LIMIT_REQUESTS: '1000000', RATE_LIMIT_WINDOW_SECONDS: '1',
    IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: String(LOCK_TIMEOUT_SECONDS), PAGOS_RECONCILE_CRON: '*/3 * * * * *', AUTENTICACION_TIMEOUT_SECONDS: '15',
    WEBHOOK_RETRY_SCHEDULE: '1,1,2,2,4,4,8,8,15,15', WEBHOOK_TIMEOUT_SECONDS: '5', STRIPE_TIMEOUT_MS: '3000', LOG_FORMAT: 'json', LOG_LEVEL: 'info',
  };
  const replicas = [new Replica(await freePort(), env), new Replica(await freePort(), env)];
  onCrash.unshift(async () => {
    for (const replica of replicas) await replica.signal('SIGKILL');
    await processor.stop('SIGKILL');
  });
  for (const replica of replicas) await replica.start();
  const balancer = await RoundRobinProxy.start(replicas.map((replica) => replica.baseUrl));
  const dropper = await ResponseDroppingProxy.start(Number(new URL(balancer.baseUrl).port), () => {
    const drop = dropRandom() < DROP_AFTER_ANSWER;
    if (drop) recorder.fault('drop-after-answer');
    return drop;
  });
  await processor.pointWebhooksAt(`${balancer.baseUrl}/stripe/webhooks`, STRIPE_WEBHOOK_SECRET);
  const consumer = await new WebhookConsumer().start();
  const webhookSecrets: Record<string, string> = {};
  for (const merchant of merchants) webhookSecrets[merchant.name] = await registerEndpoint(balancer.baseUrl, consumer.url, merchant);
  recorder.add({ t: 'setup', seed: options.seed, clients: options.clients, durationMs: options.durationMs, webhookSecrets });

  const until = Date.now() + options.durationMs;
  const serviceUrl = `http://127.0.0.1:${dropper.port}`;
  const processorKey = processor.serviceEnv.STRIPE_SECRET_KEY!;
  const clients = Array.from({ length: options.clients }, (_, id) =>
    runClient({ id, random: seededRandom(options.seed * 1000 + id), recorder, serviceUrl, token: merchants[id % merchants.length]!.token, processorUrl: processor.url, processorKey, seed: options.seed }, until),
  );
  await Promise.all([...clients, runFaults({ replicas, processor, consumer, recorder, random: faultRandom, lockTimeoutSeconds: LOCK_TIMEOUT_SECONDS, postgres: serviceDatabase.cluster }, until)]);

  console.log(`soak: clients done; quiet for ${options.quietMs / 1000} s`);
  for (const replica of replicas) {
    if (replica.stopped) await replica.signal('SIGCONT');
    if (!replica.running) await replica.start();
  }
  await processor.clearFaults();
  consumer.otherwise = 200;
  await sleep(options.quietMs);
  const started = Date.now();
  const undelivered = await waitForDeliveries(serviceDatabase.url, DELIVERY_BACKLOG_CAP_MS);
  console.log(`soak: waited ${Math.round((Date.now() - started) / 1000)} s more for webhook deliveries; ${undelivered} undelivered`);
  await recordFinalState(recorder, { url: processor.url, key: processorKey }, serviceDatabase.url, balancer.baseUrl, merchants, consumer);
  await recorder.close();

  for (const replica of replicas) await replica.signal('SIGTERM');
  await processor.stop();
  await Promise.all([balancer.close(), dropper.close(), consumer.stop()]);
  const failed = printVerdict(recorder.records);
  // A failed run's databases are the evidence; a clean run's would only pile up, one per CI run.
  const kept = await serviceDatabase.close(failed);
  if (failed) console.log(`soak: kept the processor's database ${databaseName} on --database-url and the service's in ${kept}; replay with --seed ${options.seed}`);
  else await dropDatabase(options.databaseUrl, databaseName);
  process.exit(failed ? 1 : 0);
}

/** A merchant's webhook endpoint for every event type; its secret is in the history, to check signatures. */
async function registerEndpoint(serviceUrl: string, consumerUrl: string, { name, token }: Merchant): Promise<string> {
  const headers = { authorization: `Bearer ${token}`, 'idempotency-key': `soak-endpoint-${name}-${Date.now()}` };
  const answer = await send(`${serviceUrl}/webhooks`, 'POST', headers, JSON.stringify({ url: `${consumerUrl}/${name}`, eventos: EVENT_TYPES }), 30_000);
  if (answer?.status !== 201) throw new Error(`POST /webhooks answered ${answer ? `${answer.status} ${answer.body}` : 'nothing'}`);
  return (answer.json as { secreto: string }).secreto;
}

// A run that dies (not one that finds violations) stops what it started: children outlive a process.exit.
const onCrash: Array<() => Promise<void>> = [];

main().catch(async (error: unknown) => {
  console.error(error);
  for (const cleanup of onCrash) await cleanup().catch((cleanupError: unknown) => console.error(cleanupError));
  process.exit(2);
});

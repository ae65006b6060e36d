import type { WebhookConsumer } from '../test/support/webhook-consumer.js';
import type { ProcessorProcess } from '../test/support/processor-process.js';
import type { FaultSpec } from '../test/support/local-processor.js';
import type { PostgresCluster } from '../test/support/postgres-cluster.js';
import type { Recorder } from './recorder.js';
import type { Replica } from './replica.js';

/**
 * The seeded fault schedule: every 2–6 s one fault, chosen and shaped by `random`, recorded in the
 * history. Client-side drops (before and after the answer) are decided per request elsewhere.
 */
export interface FaultTargets {
  readonly replicas: readonly Replica[];
  readonly processor: ProcessorProcess;
  readonly consumer: WebhookConsumer;
  readonly recorder: Recorder;
  readonly random: () => number;
  readonly lockTimeoutSeconds: number;
  /** The service's own cluster, to restart; undefined where it can't be. */
  readonly postgres: PostgresCluster | undefined;
}

const OPERATIONS: FaultSpec['operation'][] = ['create_intent', 'confirm_intent', 'retrieve_intent', 'cancel_intent', 'create_refund', 'list_refunds'];
const PROCESSOR_FAULTS: FaultSpec['fault'][] = ['drop_after', 'error_after', 'error_before', 'latency'];

export async function runFaults(targets: FaultTargets, until: number): Promise<void> {
  const { random } = targets;
  while (Date.now() < until) {
    await sleep(2_000 + random() * 4_000);
    if (Date.now() >= until) break;
    const kinds = [replicaKill, replicaPause, processorFault, processorOutage, consumerErrors, consumerDown, processorWebhookFault];
    if (targets.postgres) kinds.push(postgresRestart);
    await kinds[Math.floor(random() * kinds.length)]!(targets);
  }
}

async function replicaKill({ replicas, recorder, random }: FaultTargets): Promise<void> {
  const replica = replicas[Math.floor(random() * replicas.length)]!;
  if (!replica.running) return;
  recorder.fault('replica-sigkill', `port ${replica.port}`);
  await replica.signal('SIGKILL');
  await sleep(500 + random() * 2_500);
  await replica.start();
}

// Past the lease: another replica takes the stalled one's keys over; when it wakes, its writes are fenced.
async function replicaPause({ replicas, recorder, random, lockTimeoutSeconds }: FaultTargets): Promise<void> {
  const replica = replicas[Math.floor(random() * replicas.length)]!;
  if (!replica.running || replica.stopped) return;
  const ms = lockTimeoutSeconds * 1000 + 500 + random() * 3_000;
  recorder.fault('replica-sigstop', `port ${replica.port} for ${Math.round(ms)} ms`);
  await replica.signal('SIGSTOP');
  await sleep(ms);
  await replica.signal('SIGCONT');
}

async function processorFault({ processor, recorder, random }: FaultTargets): Promise<void> {
  const operation = OPERATIONS[Math.floor(random() * OPERATIONS.length)]!;
  const fault = PROCESSOR_FAULTS[Math.floor(random() * PROCESSOR_FAULTS.length)]!;
  const times = 1 + Math.floor(random() * 3);
  recorder.fault(`processor-${fault}`, `${operation} ×${times}`);
  await processor.inject({ operation, fault, times, ...(fault === 'latency' && { latencyMs: 1_000 + Math.floor(random() * 3_000) }) });
}

async function processorOutage({ processor, recorder, random }: FaultTargets): Promise<void> {
  const ms = 500 + Math.floor(random() * 2_500);
  recorder.fault('processor-outage', `${ms} ms`);
  await processor.refuse(ms);
  // The fault API is on the processor's port too: the next fault waits until it listens again.
  await sleep(ms + 200);
}

async function consumerErrors({ consumer, recorder, random }: FaultTargets): Promise<void> {
  const ms = 500 + random() * 3_000;
  recorder.fault('consumer-500', `${Math.round(ms)} ms`);
  consumer.otherwise = 500;
  await sleep(ms);
  consumer.otherwise = 200;
}

async function consumerDown({ consumer, recorder, random }: FaultTargets): Promise<void> {
  const ms = 500 + random() * 5_000;
  recorder.fault('consumer-down', `${Math.round(ms)} ms`);
  await consumer.stop();
  await sleep(ms);
  await consumer.start();
}

// `immediate` is a crash (recovery from the WAL on start); `fast` a clean restart under load.
async function postgresRestart({ postgres, recorder, random }: FaultTargets): Promise<void> {
  const mode = random() < 0.5 ? 'immediate' : 'fast';
  const ms = 500 + random() * 3_000;
  recorder.fault('postgres-restart', `${mode}, down ${Math.round(ms)} ms`);
  await postgres!.stop(mode);
  await sleep(ms);
  await postgres!.start();
}

async function processorWebhookFault({ processor, recorder, random }: FaultTargets): Promise<void> {
  const fault = (['drop', 'duplicate', 'reorder', 'delay'] as const)[Math.floor(random() * 4)]!;
  recorder.fault(`processor-webhook-${fault}`);
  await processor.injectWebhook({ fault, ...(fault === 'delay' && { delayMs: 1_000 + Math.floor(random() * 4_000) }) });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import { type Command, InvalidArgumentError } from 'commander';
import type { FailingDelivery } from '../webhooks/webhook-operations.js';
import { OpsError, opsConfig, withOps } from './ops-arguments.js';
import { printable, seconds } from './output.js';

// A list for a person to read; more than this many failing deliveries is an incident, not a list.
const FAILING_LIST_LIMIT = 1000;

/** `webhooks failing`, `webhooks redeliver --event`, `webhooks enable --id`. */
export function addWebhooksCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('webhook deliveries not yet acknowledged, redelivery, disabled endpoints');
  webhooks
    .command('failing')
    .description('deliveries not yet acknowledged, oldest first, with their last error')
    .action(() => listFailing());
  webhooks
    .command('redeliver')
    .description('deliver an event again (now, the schedule starting over) to every active endpoint subscribed to it')
    .requiredOption('--event <id>', 'the event id (evt_…)', eventIdOption)
    .action((options: { event: string }) => redeliver(options.event));
  webhooks
    .command('enable')
    .description('enable a disabled endpoint again; its undelivered events are sent now')
    .requiredOption('--id <id>', 'the endpoint id (a UUID)', endpointIdOption)
    .action((options: { id: string }) => enable(options.id));
}

async function listFailing(): Promise<void> {
  await withOps(await opsConfig(), async ({ webhooks }) => {
    const failing = await webhooks.failing(FAILING_LIST_LIMIT);
    if (failing.length === 0) console.log('every delivery has been acknowledged');
    for (const delivery of failing) console.log(describe(delivery));
  });
}

async function redeliver(eventId: string): Promise<void> {
  await withOps(await opsConfig(), async ({ webhooks }) => {
    const endpoints = await webhooks.redeliver(eventId);
    if (!endpoints) throw new OpsError(`no event ${eventId} (unknown, or purged after EVENTS_TTL_DAYS)`);
    console.log(endpoints.length === 0 ? `event ${eventId}: no active endpoint is subscribed to it` : `event ${eventId} enqueued for ${endpoints.join(', ')}`);
  });
}

async function enable(endpointId: string): Promise<void> {
  await withOps(await opsConfig(), async ({ webhooks }) => {
    const backlog = await webhooks.enable(endpointId);
    if (backlog === undefined) throw new OpsError(`endpoint ${endpointId} is not disabled (or does not exist)`);
    console.log(`endpoint ${endpointId} enabled; ${backlog} undelivered event(s) enqueued`);
  });
}

function describe(delivery: FailingDelivery): string {
  const age = seconds((Date.now() - delivery.createdAt.getTime()) / 1000);
  const state = delivery.disabledAt ? 'endpoint DISABLED' : `${delivery.attempts} attempt(s)`;
  // Every stored text is printed escaped: a URL or an error with CR, LF or ESC can't forge a line or drive the terminal.
  const line = `${delivery.eventId}  ${delivery.type}  client ${delivery.clientId}  endpoint ${delivery.endpointId} ${delivery.url}  waiting ${age}  ${state}  last error: ${delivery.lastError ?? 'none yet'}`;
  return printable(line);
}

function eventIdOption(value: string): string {
  if (!/^evt_[0-9a-f]{32}$/.test(value)) throw new InvalidArgumentError('an event id: evt_ and 32 hexadecimal digits');
  return value;
}

function endpointIdOption(value: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new InvalidArgumentError('an endpoint id (a UUID)');
  return value;
}

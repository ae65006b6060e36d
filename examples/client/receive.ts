import http from 'node:http';
import { WebhookReceiver } from './webhook-receiver.js';

// `WEBHOOK_SECRET=whsec_… npm run webhook-receiver`: listens on WEBHOOK_RECEIVER_PORT (default 8080)
// and prints what it accepts; ids seen are kept in memory (a real consumer keeps them with its effects).
const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  console.error('set WEBHOOK_SECRET to the secreto POST /webhooks answered (whsec_…)');
  process.exit(64);
}
const port = Number(process.env.WEBHOOK_RECEIVER_PORT ?? 8080);
const receiver = new WebhookReceiver(secret, new Set<string>(), (event) => console.log(JSON.stringify(event.data)));
http.createServer(receiver.listener()).listen(port, '127.0.0.1', () => console.log(`webhook receiver on http://127.0.0.1:${port}/`));

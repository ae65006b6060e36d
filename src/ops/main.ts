import 'reflect-metadata';
import { Command, CommanderError } from 'commander';
import { addKeyCommands } from './key.commands.js';
import { isOperatorError } from './ops-arguments.js';
import { addPagosCommands } from './pagos.commands.js';
import { addWebhooksCommands } from './webhooks.commands.js';

/** `npm run ops -- <command>`: an operator's view of keys and payments, on the service's own code and configuration. */
function program(): Command {
  const root = new Command('ops')
    .description("Operator's commands for pagos: idempotency keys and payments left in limbo")
    .showHelpAfterError()
    .exitOverride();
  addKeyCommands(root);
  addPagosCommands(root);
  addWebhooksCommands(root);
  return root;
}

program()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    // Commander has printed its own usage error (or the help) already.
    if (error instanceof CommanderError) process.exit(error.exitCode);
    console.error(isOperatorError(error) ? `error: ${error.message}` : error);
    process.exit(1);
  });

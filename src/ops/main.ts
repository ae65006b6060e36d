import 'reflect-metadata';
import { type Command, CommanderError } from 'commander';
import { addKeyCommands } from './key.commands.js';
import { isOperatorError } from './ops-arguments.js';
import { OpsCommand } from './ops-command.js';
import { addPagosCommands } from './pagos.commands.js';
import { addWebhooksCommands } from './webhooks.commands.js';

/** `npm run ops -- <command>`: an operator's view of keys and payments, on the service's own code and configuration. */
function program(): Command {
  const root = new OpsCommand('ops')
    .description("Operator's commands for pagos: idempotency keys and payments left in limbo")
    .exitOverride();
  addKeyCommands(root);
  addPagosCommands(root);
  addWebhooksCommands(root);
  return root;
}

program()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    // Commander has printed the usage error (one line, see OpsCommand) or the help already.
    if (error instanceof CommanderError) process.exit(error.exitCode);
    console.error(isOperatorError(error) ? `error: ${error.message}` : error);
    process.exit(1);
  });

import { Command, type ErrorOptions, type HelpContext } from 'commander';

/** The exit status of a command line the CLI cannot run (unknown command or option, missing or invalid argument), as shells and getopt use it. */
export const USAGE_EXIT_CODE = 2;

/**
 * A commander command whose usage errors are one line on stderr, naming the help that shows the way
 * (`error: unknown command 'foo' (see npm run ops -- --help)`), exit status 2. `--help` still prints
 * the whole help. Its subcommands are of this class too (commander's `createCommand`).
 *
 * @example
 * const root = new OpsCommand('ops').exitOverride();
 * root.command('pagos').command('pending').action(listPending);
 */
export class OpsCommand extends Command {
  override createCommand(name?: string): OpsCommand {
    return new OpsCommand(name);
  }

  // Commander folds a suggestion ("Did you mean key?") onto a second line; an operator reads one.
  override error(message: string, options?: ErrorOptions): never {
    const line = message.trim().replace(/\s*\n\s*/g, ' ');
    return super.error(`${line} (see npm run ops -- ${[...this.names(), '--help'].join(' ')})`, { ...options, exitCode: USAGE_EXIT_CODE });
  }

  // Commander prints the whole help, as an error, for a command that only groups others when none is
  // given, and for `help <unknown>` (whose word is left in `args`).
  override help(context?: HelpContext | ((text: string) => string)): never {
    if (typeof context === 'object' && context.error) {
      const unknown = this.args.find((word) => word !== 'help');
      if (unknown !== undefined) return this.error(`error: unknown command '${unknown}'`, { code: 'commander.unknownCommand' });
      const choices = this.commands.map((command) => command.name()).join(', ');
      return this.error(`error: missing command: one of ${choices}`, { code: 'commander.missingCommand' });
    }
    return super.help(context as HelpContext);
  }

  /** The command words after `npm run ops --` that lead here (none for the root). */
  private names(): string[] {
    return this.parent instanceof OpsCommand ? [...this.parent.names(), this.name()] : [];
  }
}

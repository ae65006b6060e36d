import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

// Nest's own exception handlers pass a stack as the second argument of error().
const STACK = /\n\s*at /;

/**
 * Nest's wiring reports (every module initialised, every route mapped, "Starting Nest application"):
 * at `debug`, so that the `info` start-up log is the few lines a person reads (see main.ts).
 */
const WIRING_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * Nest's logger interface written to pino: `new Logger('Context').warn('text')` becomes
 * `{"level":40,"context":"Context","msg":"text"}`; an Error (or Nest's message + stack) is logged as `err`;
 * Nest's wiring reports go out at `debug`.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write(WIRING_CONTEXTS.has(rest.at(-1) as string) ? 'debug' : 'info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context last: (message, context), or for errors (message, stack, context). */
  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const params = rest.length > 0 ? rest.slice(0, -1) : [];
    if (rest.length > 0) fields.context = rest[rest.length - 1];
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message });
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, ...message });
    } else if (level === 'error' && typeof params[0] === 'string' && STACK.test(params[0])) {
      this.logger[level]({ ...fields, err: Object.assign(new Error(String(message)), { stack: params[0] }) });
    } else {
      this.logger[level](fields, String(message));
    }
  }
}

import { CronTime } from 'cron';
import { type ValidationArguments, ValidatorConstraint, type ValidatorConstraintInterface } from 'class-validator';

/** A URL with one of these schemes (`'redis:'`, with the colon) and a host. */
function isUrlWithHost(value: unknown, protocols: readonly string[]): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return protocols.includes(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}

@ValidatorConstraint({ name: 'databaseUrl' })
export class DatabaseUrlConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return isUrlWithHost(value, ['postgres:', 'postgresql:']);
  }

  defaultMessage(args?: ValidationArguments): string {
    return `${args?.property ?? 'DATABASE_URL'} must be a postgres:// URL with a host, e.g. postgres://user@127.0.0.1:5432/pagos`;
  }
}

@ValidatorConstraint({ name: 'redisUrl' })
export class RedisUrlConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return isUrlWithHost(value, ['redis:', 'rediss:']);
  }

  defaultMessage(): string {
    return 'REDIS_URL must be a redis:// or rediss:// URL with a host, e.g. redis://127.0.0.1:6379';
  }
}

@ValidatorConstraint({ name: 'processorUrl' })
export class ProcessorUrlConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return isUrlWithHost(value, ['https:', 'http:']);
  }

  defaultMessage(): string {
    return 'STRIPE_API_URL must be an https:// or http:// URL with a host, e.g. https://api.stripe.com or http://127.0.0.1:12111';
  }
}

@ValidatorConstraint({ name: 'cronExpression' })
export class CronExpressionConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      new CronTime(value);
      return true;
    } catch {
      return false;
    }
  }

  defaultMessage(args?: ValidationArguments): string {
    return `${args?.property ?? 'the value'} must be a cron expression with seconds, e.g. "0 */10 * * * *"`;
  }
}

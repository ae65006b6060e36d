import { CronTime } from 'cron';
import { type ValidationArguments, ValidatorConstraint, type ValidatorConstraintInterface } from 'class-validator';

@ValidatorConstraint({ name: 'databaseUrl' })
export class DatabaseUrlConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      const url = new URL(value);
      return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
    } catch {
      return false;
    }
  }

  defaultMessage(args?: ValidationArguments): string {
    return `${args?.property ?? 'DATABASE_URL'} must be a postgres:// URL with a host, e.g. postgres://user@127.0.0.1:5432/pagos`;
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

  defaultMessage(): string {
    return 'IDEMPOTENCY_PURGE_CRON must be a cron expression, e.g. "0 */10 * * * *"';
  }
}

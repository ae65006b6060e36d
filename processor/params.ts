import { invalidParameter, missingParameter } from './answers.js';
import type { FormObject, FormValue } from './form-body.js';

/**
 * Reading Stripe parameters out of a parsed form. Every failure throws a rejection that is not
 * stored under the idempotency key (the request changed nothing).
 */

// Stripe's ceiling for an amount in minor units (eight digits before the decimals of most currencies).
// pagos's own bound (10^12 minor units); Stripe's is lower for most currencies (amount_too_large).
export const MAX_AMOUNT = 1_000_000_000_000;

/** Like Stripe, an unknown parameter is an error rather than silently ignored. */
export function rejectUnknownParams(params: FormObject, allowed: readonly string[]): void {
  const unknown = Object.keys(params).find((name) => !allowed.includes(name));
  if (unknown !== undefined) throw invalidParameter(unknown, `Received unknown parameter: ${unknown}`);
}

/** A string parameter; an empty value counts as absent, as Stripe's form encoding of null. */
export function optionalString(params: FormObject, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalidParameter(name, `Invalid string: ${name} must be a string.`);
  return value;
}

export function requiredString(params: FormObject, name: string): string {
  const value = optionalString(params, name);
  if (value === undefined) throw missingParameter(name);
  return value;
}

export function optionalOneOf<T extends string>(params: FormObject, name: string, values: readonly T[]): T | undefined {
  const value = optionalString(params, name);
  if (value === undefined || (values as readonly string[]).includes(value)) return value as T | undefined;
  throw invalidParameter(name, `Invalid ${name}: must be one of ${values.join(', ')}`);
}

export function optionalBoolean(params: FormObject, name: string): boolean | undefined {
  const value = optionalOneOf(params, name, ['true', 'false']);
  return value === undefined ? undefined : value === 'true';
}

/** A positive integer amount in minor units, at most MAX_AMOUNT. */
export function optionalAmount(params: FormObject, name: string): number | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw invalidParameter(name, `Invalid integer: ${value}`);
  const amount = Number(value);
  if (amount < 1) throw invalidParameter(name, 'This value must be greater than or equal to 1.');
  if (amount > MAX_AMOUNT) throw invalidParameter(name, `This value must be less than or equal to ${MAX_AMOUNT}.`);
  return amount;
}

export function requiredAmount(params: FormObject, name: string): number {
  const amount = optionalAmount(params, name);
  if (amount === undefined) throw missingParameter(name);
  return amount;
}

/** Three letters, stored lower case. */
export function requiredCurrency(params: FormObject): string {
  const currency = requiredString(params, 'currency');
  if (!/^[a-zA-Z]{3}$/.test(currency)) throw invalidParameter('currency', `Invalid currency: ${currency}. Stripe currencies are three-letter ISO codes.`);
  return currency.toLowerCase();
}

/** `metadata[key]=value` pairs: an object of strings (absent or empty → `{}`). */
export function metadataOf(params: FormObject): Record<string, string> {
  const value = params.metadata;
  if (value === undefined || value === '') return {};
  if (!isFormObject(value) || Object.values(value).some((item) => typeof item !== 'string')) {
    throw invalidParameter('metadata', 'Invalid metadata: must be a hash of string keys to string values.');
  }
  return { ...(value as Record<string, string>) };
}

export function optionalObject(params: FormObject, name: string): FormObject | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (!isFormObject(value)) throw invalidParameter(name, `Invalid object: ${name} must be a hash.`);
  return value;
}

function isFormObject(value: FormValue): value is FormObject {
  return typeof value === 'object' && !Array.isArray(value);
}

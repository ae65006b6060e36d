import { RequestRejection } from './answers.js';

/**
 * The currencies and amounts a PaymentIntent may have, checked as Stripe checks them (400s that
 * are not stored: the request changed nothing). A small allowlist: enough for a development
 * stand-in, and an unexpected currency fails here as it would at Stripe.
 */
export const SUPPORTED_CURRENCIES = ['eur', 'usd', 'gbp', 'jpy', 'chf', 'sek', 'nok', 'dkk', 'pln', 'czk', 'mxn', 'cad', 'aud', 'brl'] as const;

// Stripe's minimum charge is about 0.50 of a major unit for most currencies; 50 minor units here for all of them.
export const MINIMUM_AMOUNT = 50;
// Stripe's ceiling for most currencies: eight digits of minor units.
export const MAXIMUM_AMOUNT = 99_999_999;

const ZERO_DECIMAL = new Set(['jpy']);
const SYMBOLS: Readonly<Record<string, string>> = { eur: '€', usd: '$', gbp: '£', jpy: '¥' };

export function assertSupportedCurrency(currency: string): void {
  if ((SUPPORTED_CURRENCIES as readonly string[]).includes(currency)) return;
  throw new RequestRejection(400, { type: 'invalid_request_error', param: 'currency', message: `Invalid currency: ${currency}` });
}

export function assertAmountWithinLimits(amount: number, currency: string): void {
  if (amount < MINIMUM_AMOUNT) {
    throw amountRejection('amount_too_small', `Amount must be at least ${formatted(MINIMUM_AMOUNT, currency)} ${currency}`);
  }
  if (amount > MAXIMUM_AMOUNT) {
    throw amountRejection('amount_too_large', `Amount must be no more than ${formatted(MAXIMUM_AMOUNT, currency)} ${currency}`);
  }
}

function amountRejection(code: string, message: string): RequestRejection {
  return new RequestRejection(400, { type: 'invalid_request_error', code, param: 'amount', message });
}

/** 50 eur → "€0.50", 99999999 usd → "$999,999.99", 50 jpy → "¥50". */
function formatted(minor: number, currency: string): string {
  const decimals = ZERO_DECIMAL.has(currency) ? 0 : 2;
  const major = (minor / 10 ** decimals).toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  return `${SYMBOLS[currency] ?? ''}${major}`;
}

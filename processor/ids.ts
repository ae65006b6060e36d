import { randomInt } from 'node:crypto';

const ALPHANUMERICS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const RANDOM_PART_LENGTH = 24;

/** Stripe-looking ids: `pi_`, `ch_`, `re_`, `pm_`, `req_`, `evt_` followed by 24 random alphanumerics. */
export function newId(prefix: 'pi' | 'ch' | 're' | 'pm' | 'req' | 'evt'): string {
  let id = `${prefix}_`;
  for (let index = 0; index < RANDOM_PART_LENGTH; index++) id += ALPHANUMERICS[randomInt(ALPHANUMERICS.length)];
  return id;
}

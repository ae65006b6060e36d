/** What makes a webhook endpoint acceptable, for every way of setting one (options, env, fault API). */

/** Why `url` and `secret` cannot serve as an endpoint, or undefined when they can. */
export function endpointProblem(url: unknown, secret: unknown): string | undefined {
  return urlProblem(url) ?? secretProblem(secret);
}

export function urlProblem(url: unknown): string | undefined {
  if (typeof url !== 'string' || !URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) {
    return `the webhook URL must be an http(s) URL, got ${JSON.stringify(url)}`;
  }
  return undefined;
}

/** Stripe's endpoint secrets start `whsec_`; anything else is a mistake, such as an API key pasted there. */
export function secretProblem(secret: unknown): string | undefined {
  if (typeof secret !== 'string' || !secret.startsWith('whsec_') || secret.length <= 'whsec_'.length) {
    return 'the webhook secret must start with whsec_';
  }
  return undefined;
}

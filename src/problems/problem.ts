import { HttpException, HttpStatus } from '@nestjs/common';

// The problem vocabulary (RFC 9457) imports no module of ours: it sits below every one that has
// errors to answer with, auth/ and rate-limit/ as much as the features, and below http/, which writes them.

/** Base of every `type` URI; a problem's slug is appended (RFC 9457 §3.1.1). */
export const PROBLEM_TYPE_BASE = 'https://pagos.dev/problems/';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** The Content-Type every problem is sent with: the body is always UTF-8 JSON. */
export const PROBLEM_CONTENT_TYPE_UTF8 = `${PROBLEM_CONTENT_TYPE}; charset=utf-8`;

export interface ProblemDocument {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: unknown;
}

export interface RenderedProblem {
  readonly status: number;
  readonly body: ProblemDocument;
  /** Response headers the problem needs, such as `Retry-After`. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface ProblemDefinition {
  readonly slug: string;
  readonly title: string;
  readonly status: HttpStatus;
}

/**
 * An expected failure with a problem+json answer. Modules subclass it in their own `*.errors.ts`
 * with a fixed definition; `detail` tells the client what to do next.
 */
export class ProblemException extends HttpException {
  constructor(
    readonly definition: ProblemDefinition,
    readonly detail: string,
    readonly extensions: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail, definition.status);
  }

  render(): RenderedProblem {
    const { slug, title, status } = this.definition;
    return {
      status,
      // Extensions first: they may add members, never replace the standard ones.
      body: { ...this.extensions, type: PROBLEM_TYPE_BASE + slug, title, status, detail: this.detail },
      headers: this.headers,
    };
  }
}

const INTERNAL_ERROR: ProblemDefinition = { slug: 'internal-error', title: 'Internal error', status: HttpStatus.INTERNAL_SERVER_ERROR };

/** Any thrown value as the problem the client sees; never leaks messages of non-HTTP errors. */
export function renderProblem(error: unknown): RenderedProblem {
  if (error instanceof ProblemException) return error.render();
  if (error instanceof HttpException) return renderHttpException(error);
  return new ProblemException(INTERNAL_ERROR, 'The request failed on our side. Retry it with the same Idempotency-Key.').render();
}

// Nest's and Fastify's own exceptions (404 for unknown routes, 413 for a body over the limit, ...) keep their status.
function renderHttpException(error: HttpException): RenderedProblem {
  const status = error.getStatus();
  const title = HttpStatus[status] ? titleOf(HttpStatus[status]) : 'Error';
  const slug = title.toLowerCase().replaceAll(' ', '-');
  const detail = status >= 500 ? 'The request failed on our side.' : messageOf(error);
  return new ProblemException({ slug, title, status }, detail).render();
}

function messageOf(error: HttpException): string {
  const response = error.getResponse();
  const message = typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : error.message;
}

function titleOf(constantName: string): string {
  const words = constantName.toLowerCase().split('_');
  return words.map((word, index) => (index === 0 ? word[0]!.toUpperCase() + word.slice(1) : word)).join(' ');
}

import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiExtraModels, DECORATORS, getSchemaPath, type HeaderObject, type ReferenceObject, type ResponseObject, type SchemaObject,
} from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, type RenderedProblem, renderProblem } from '../problems/problem.js';
import { problemSchemaOf, problemTypeOfRef } from './problem-schemas.js';

type DocumentedResponses = Record<string, ResponseObject>;

/**
 * Documents problems a route (or every route of a controller) may answer: one response per status,
 * `application/problem+json`, each problem type with its own schema (see {@link problemSchemaOf}) and
 * rendered as a named example from the real error, so the document can't drift from what the filter
 * writes. Statuses documented by several calls are merged: a status with several problem types is
 * `oneOf` their schemas with a discriminator on `type` (the 409 of a key in flight and of an order
 * already paid). `members`: a class documenting the members these problems add to the standard ones.
 * A route-level call for a status replaces the controller-level one for that status.
 *
 * @example
 *   @ApiProblems([new OrderNotFoundError()])
 *   @ApiProblems([new PaymentDeclinedError(examplePayment)], PaymentDeclinedMembers)
 */
export function ApiProblems(errors: readonly unknown[], members?: Type): MethodDecorator & ClassDecorator {
  const problems = errors.map((error) => renderProblem(error));
  const models = problems.map((problem) => problemSchemaOf(problem, members));
  const documentProblems = (holder: object): void => {
    const responses: DocumentedResponses = { ...Reflect.getMetadata(DECORATORS.API_RESPONSE, holder) };
    problems.forEach((problem, index) => {
      responses[problem.status] = withProblem(responses[problem.status], problem, getSchemaPath(models[index]!));
    });
    Reflect.defineMetadata(DECORATORS.API_RESPONSE, responses, holder);
  };
  return applyDecorators(ApiExtraModels(...new Set(models)), (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    documentProblems(descriptor ? descriptor.value : target);
  });
}

function withProblem(response: ResponseObject | undefined, problem: RenderedProblem, ref: string): ResponseObject {
  const { body, headers } = problem;
  const slug = body.type.slice(PROBLEM_TYPE_BASE.length);
  const media = response?.content?.[PROBLEM_CONTENT_TYPE];
  const allHeaders = { ...response?.headers, ...headersOf(slug, headers, response?.headers) };
  return {
    ...response,
    description: [response?.description, `\`${slug}\`: ${body.title}`].filter(Boolean).join('\n\n'),
    ...(Object.keys(allHeaders).length > 0 && { headers: allHeaders }),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: withSchema(media?.schema, ref),
        examples: { ...media?.examples, [slug]: { summary: body.title, value: body } },
      },
    },
  };
}

function withSchema(schema: SchemaObject | ReferenceObject | undefined, ref: string): SchemaObject | ReferenceObject {
  const refs = schema ? ('oneOf' in schema && schema.oneOf ? schema.oneOf : [schema]).map((part) => (part as ReferenceObject).$ref) : [];
  const all = refs.includes(ref) ? refs : [...refs, ref];
  if (all.length === 1) return { $ref: all[0]! };
  return {
    oneOf: all.map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(all.map(($ref) => [problemTypeOfRef($ref), $ref])) },
  };
}

// A header some problems of a status send and others don't says which ones send it.
function headersOf(slug: string, headers: Readonly<Record<string, string>>, documented: ResponseObject['headers']): Record<string, HeaderObject> {
  const result: Record<string, HeaderObject> = {};
  for (const [name, value] of Object.entries(headers)) {
    const previous = documented?.[name] as HeaderObject | undefined;
    const sentWith = [previous?.description?.replace(/^Sent with /, ''), `\`${slug}\``].filter(Boolean).join(', ');
    result[name] = { description: `Sent with ${sentWith}`, schema: headerSchemaOf(value) };
  }
  return result;
}

// Retry-After is sent as delay-seconds only (never an HTTP date): a whole number a client can wait.
function headerSchemaOf(value: string): SchemaObject {
  return /^\d+$/.test(value) ? { type: 'integer', minimum: 0, example: Number(value) } : { type: 'string', example: value };
}

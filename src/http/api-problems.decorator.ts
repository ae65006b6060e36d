import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiExtraModels, DECORATORS, getSchemaPath, type HeaderObject, type ReferenceObject, type ResponseObject, type SchemaObject,
} from '@nestjs/swagger';
import { ProblemDocumentSchema } from './problem-document.schema.js';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, renderProblem } from '../problems/problem.js';

type DocumentedResponses = Record<string, ResponseObject>;

/**
 * Documents problems a route (or every route of a controller) may answer: one response per status,
 * `application/problem+json` with the `Problem` schema, and each problem rendered as a named example
 * from the real error, so the document can't drift from what the filter writes. Statuses documented
 * by several calls are merged (the 409 of a key in flight and of an order already paid).
 * `extension`: a class documenting the extension members these problems add (allOf with `Problem`).
 *
 * @example
 *   @ApiProblems([new OrderNotFoundError()])
 *   @ApiProblems([new PaymentDeclinedError(examplePayment)], PaymentDeclinedProblem)
 */
export function ApiProblems(errors: readonly unknown[], extension?: Type): MethodDecorator & ClassDecorator {
  const documentProblems = (holder: object): void => {
    const responses: DocumentedResponses = { ...Reflect.getMetadata(DECORATORS.API_RESPONSE, holder) };
    for (const error of errors) {
      const problem = renderProblem(error);
      responses[problem.status] = withProblem(responses[problem.status], problem.body, problem.headers, extension);
    }
    Reflect.defineMetadata(DECORATORS.API_RESPONSE, responses, holder);
  };
  const models = extension ? [ProblemDocumentSchema, extension] : [ProblemDocumentSchema];
  return applyDecorators(ApiExtraModels(...models), (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    documentProblems(descriptor ? descriptor.value : target);
  });
}

function withProblem(
  response: ResponseObject | undefined,
  body: { type: string; title: string },
  headers: Readonly<Record<string, string>>,
  extension: Type | undefined,
): ResponseObject {
  const slug = body.type.slice(PROBLEM_TYPE_BASE.length);
  const media = response?.content?.[PROBLEM_CONTENT_TYPE];
  const allHeaders = { ...response?.headers, ...headersOf(slug, headers, response?.headers) };
  return {
    ...response,
    description: [response?.description, `\`${slug}\`: ${body.title}`].filter(Boolean).join('\n\n'),
    ...(Object.keys(allHeaders).length > 0 && { headers: allHeaders }),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: withExtension(media?.schema, extension),
        examples: { ...media?.examples, [slug]: { summary: body.title, value: body } },
      },
    },
  };
}

function withExtension(schema: SchemaObject | ReferenceObject | undefined, extension: Type | undefined): SchemaObject | ReferenceObject {
  const parts = schema ? ('allOf' in schema && schema.allOf ? schema.allOf : [schema]) : [{ $ref: getSchemaPath(ProblemDocumentSchema) }];
  const added = extension ? { $ref: getSchemaPath(extension) } : undefined;
  const all = added && !parts.some((part) => '$ref' in part && part.$ref === added.$ref) ? [...parts, added] : parts;
  return all.length === 1 ? all[0]! : { allOf: all };
}

// A header some problems of a status send and others don't says which ones send it.
function headersOf(slug: string, headers: Readonly<Record<string, string>>, documented: ResponseObject['headers']): Record<string, HeaderObject> {
  const result: Record<string, HeaderObject> = {};
  for (const [name, value] of Object.entries(headers)) {
    const previous = documented?.[name] as HeaderObject | undefined;
    const sentWith = [previous?.description?.replace(/^Sent with /, ''), `\`${slug}\``].filter(Boolean).join(', ');
    result[name] = { description: `Sent with ${sentWith}`, schema: { type: 'string', example: value } };
  }
  return result;
}

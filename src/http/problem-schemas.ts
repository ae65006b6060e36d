import type { Type } from '@nestjs/common';
import { ApiProperty, ApiSchema, DECORATORS, getSchemaPath, IntersectionType } from '@nestjs/swagger';
import { ProblemDocumentSchema } from './problem-document.schema.js';
import { PROBLEM_TYPE_BASE, type RenderedProblem } from '../problems/problem.js';

const STANDARD_MEMBERS = new Set(['type', 'title', 'status', 'detail']);

interface ProblemSchema {
  readonly model: Type;
  readonly members: Type | undefined;
  readonly typeUri: string;
}

// One schema per problem type for the whole document, however many routes answer it.
const schemasBySlug = new Map<string, ProblemSchema>();
const typeUriByRef = new Map<string, string>();

/**
 * The OpenAPI schema of one problem type (`OrdenYaPagadaProblem` for `orden-ya-pagada`): the
 * standard members, `type` fixed to its URI and `status` to its code, plus the members it adds
 * (`members`, a class whose properties are documented with `@ApiProperty`). A response answering
 * several types combines their schemas with `oneOf` and a discriminator on `type`.
 * Throws at start-up when the rendered problem carries a member its schema does not declare, or
 * when two routes document one type with different members.
 */
export function problemSchemaOf(problem: RenderedProblem, members?: Type): Type {
  const slug = problem.body.type.slice(PROBLEM_TYPE_BASE.length);
  const known = schemasBySlug.get(slug);
  if (known) {
    if (known.members !== members) throw new Error(`problem ${slug} is documented with two different member schemas`);
    return known.model;
  }
  assertMembersDeclared(slug, problem, members);
  const model = buildModel(`${pascalCase(slug)}Problem`, problem, members);
  schemasBySlug.set(slug, { model, members, typeUri: problem.body.type });
  typeUriByRef.set(getSchemaPath(model), problem.body.type);
  return model;
}

/** The `type` URI a problem schema (by its `$ref`) fixes; for the discriminator's mapping. */
export function problemTypeOfRef(ref: string): string {
  const typeUri = typeUriByRef.get(ref);
  if (!typeUri) throw new Error(`${ref} is not a problem schema`);
  return typeUri;
}

function buildModel(name: string, problem: RenderedProblem, members: Type | undefined): Type {
  const base = members ? IntersectionType(ProblemDocumentSchema, members) : ProblemDocumentSchema;
  const model = { [name]: class extends base {} }[name]!;
  ApiProperty({ enum: [problem.body.type], example: problem.body.type })(model.prototype, 'type');
  ApiProperty({ type: 'integer', enum: [problem.status], example: problem.status })(model.prototype, 'status');
  ApiProperty({ example: problem.body.title })(model.prototype, 'title');
  ApiProperty({ example: problem.body.detail })(model.prototype, 'detail');
  ApiSchema({ name, description: `\`${problem.body.type}\`: ${problem.body.title}.` })(model);
  return model;
}

function assertMembersDeclared(slug: string, problem: RenderedProblem, members: Type | undefined): void {
  const keys: string[] = members ? (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, members.prototype) ?? []) : [];
  const documented = new Set(keys.map((key) => key.replace(/^:/, '')));
  for (const name of Object.keys(problem.body)) {
    if (!STANDARD_MEMBERS.has(name) && !documented.has(name)) throw new Error(`problem ${slug} sends member "${name}", which its schema does not declare`);
  }
}

function pascalCase(slug: string): string {
  return slug.split('-').map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

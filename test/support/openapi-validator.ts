import { spawn } from 'node:child_process';
import { once } from 'node:events';

export type ValidationResult = { readonly valid: true; readonly title: string } | { readonly valid: false; readonly message: string };

// Run by Node itself: swagger-parser is CommonJS requiring an ESM-only package, which Jest's ES-module runtime can't load.
const VALIDATE = `
import SwaggerParser from '@apidevtools/swagger-parser';
let input = '';
for await (const chunk of process.stdin) input += chunk;
try {
  const api = await SwaggerParser.validate(JSON.parse(input));
  process.stdout.write(JSON.stringify({ valid: true, title: api.info.title }));
} catch (error) {
  process.stdout.write(JSON.stringify({ valid: false, message: error.message }));
}`;

/** Validates an OpenAPI document against its specification (schema and $refs) with @apidevtools/swagger-parser. */
export async function validateOpenApiDocument(document: unknown): Promise<ValidationResult> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', VALIDATE], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stdin.end(JSON.stringify(document));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the OpenAPI validator exited with ${code}: ${output}`);
  return JSON.parse(output) as ValidationResult;
}

/**
 * Stripe's form encoding: `application/x-www-form-urlencoded` with bracket notation for nesting,
 * as the SDK sends it (`metadata[pago_id]=7`, `payment_method_types[0]=card`,
 * `payment_method_data[card][token]=tok_visa`). Query strings use the same notation.
 */
export type FormValue = string | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

// Beyond any real request; keeps `a[99999999]=x` from allocating a huge sparse array.
const MAX_ARRAY_INDEX = 1_000;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export class FormSyntaxError extends Error {}

/** `a[b][0]=x&a[b][1]=y` → `{ a: { b: ['x', 'y'] } }`; a repeated plain key keeps its last value. */
export function parseForm(text: string): FormObject {
  const root: FormObject = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (name === '') continue;
    assign(root, pathOf(name), value);
  }
  return compactArrays(root) as FormObject;
}

/** `a[b][]` → `['a', 'b', '']`. */
function pathOf(name: string): string[] {
  const open = name.indexOf('[');
  if (open <= 0) return [name];
  const segments = [name.slice(0, open)];
  const rest = name.slice(open);
  const bracket = /\[([^\]]*)\]/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = bracket.exec(rest)) !== null) {
    segments.push(match[1]!);
    consumed = bracket.lastIndex;
  }
  if (consumed !== rest.length) throw new FormSyntaxError(`Invalid parameter name: ${name}`);
  return segments;
}

function assign(root: FormObject, path: string[], value: string): void {
  let container: FormObject | FormValue[] = root;
  for (let index = 0; index < path.length; index++) {
    const segment = path[index]!;
    if (FORBIDDEN_KEYS.has(segment)) throw new FormSyntaxError(`Invalid parameter name: ${path.join('.')}`);
    const last = index === path.length - 1;
    const nextIsArray = !last && isArrayIndex(path[index + 1]!);
    const slot = slotIn(container, segment, path);
    const existing = (container as Record<string, FormValue | undefined>)[slot];
    if (last) {
      (container as Record<string, FormValue>)[slot] = value;
      return;
    }
    const wanted = nextIsArray ? Array.isArray(existing) : isObject(existing);
    if (existing === undefined || !wanted) {
      if (existing !== undefined) throw new FormSyntaxError(`Conflicting values for parameter: ${path.slice(0, index + 1).join('.')}`);
      (container as Record<string, FormValue>)[slot] = nextIsArray ? [] : {};
    }
    container = (container as Record<string, FormObject | FormValue[]>)[slot]!;
  }
}

/** The property to write: an object key, or an array index (`[]` appends). */
function slotIn(container: FormObject | FormValue[], segment: string, path: string[]): string {
  if (!Array.isArray(container)) return segment;
  if (segment === '') return String(container.length);
  const index = Number(segment);
  if (index > MAX_ARRAY_INDEX) throw new FormSyntaxError(`Array index too large in parameter: ${path.join('.')}`);
  return segment;
}

function isArrayIndex(segment: string): boolean {
  return segment === '' || /^\d+$/.test(segment);
}

function isObject(value: FormValue | undefined): value is FormObject {
  return typeof value === 'object' && !Array.isArray(value);
}

/** Sparse arrays (`a[0]`, `a[5]`) become dense, in index order. */
function compactArrays(value: FormValue): FormValue {
  if (Array.isArray(value)) return value.filter((item) => item !== undefined).map(compactArrays);
  if (typeof value === 'object') {
    for (const key of Object.keys(value)) value[key] = compactArrays(value[key]!);
  }
  return value;
}

import { readFileSync } from 'node:fs';

/** One instruction of a Dockerfile: its keyword (upper case), its flags (`--from=build`) and its arguments. */
export interface DockerInstruction {
  readonly keyword: string;
  readonly flags: readonly string[];
  readonly args: string;
}

/** A stage: its image, its name (`AS build`) and its instructions after FROM. */
export interface DockerStage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: readonly DockerInstruction[];
}

/** The stages of a Dockerfile: continuation lines joined, comments and the parser directive dropped. */
export function parseDockerfile(file: string): DockerStage[] {
  const lines = readFileSync(file, 'utf8')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages: Array<{ image: string; name: string | undefined; instructions: DockerInstruction[] }> = [];
  for (const line of lines) {
    const [, keyword, rest] = /^(\S+)\s+(.*)$/.exec(line)!;
    const words = rest!.split(/\s+/);
    const flags = words.filter((word, index) => word.startsWith('--') && words.slice(0, index).every((w) => w.startsWith('--')));
    const instruction = { keyword: keyword!.toUpperCase(), flags, args: words.slice(flags.length).join(' ') };
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = instruction.args.split(' ');
      stages.push({ image: image!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

/**
 * `.dockerignore` as a predicate on paths relative to the context: each line a pattern (`*` and `?`
 * within one path segment, `**` across segments, a leading `!` re-includes), the last match wins, and
 * a path is excluded with its folder.
 */
export function dockerIgnore(text: string): (relativePath: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => ({ include: line.startsWith('!'), pattern: toRegExp(line.replace(/^!/, '').replace(/^\/+|\/+$/g, '')) }));
  const matches = (path: string): boolean => {
    let excluded = false;
    for (const rule of rules) if (rule.pattern.test(path)) excluded = !rule.include;
    return excluded;
  };
  return (relativePath) => {
    const segments = relativePath.split('/');
    return segments.some((_, index) => matches(segments.slice(0, index + 1).join('/')));
  };
}

function toRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      i++;
      if (pattern[i + 1] === '/') {
        source += '(?:.*/)?';
        i++;
      } else source += '.*';
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

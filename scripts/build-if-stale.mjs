// `node scripts/build-if-stale.mjs [--always] <target>…`: builds a target only when the sources its
// compiler reads differ from those of its last successful build, so `npm run ops`, `npm start` and
// `npm run client` cost a build once per change instead of once per call (nest build: 6–8 s).
// Plain JavaScript on Node's own modules: it runs before anything is compiled, and adds no dependency.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * What each npm script builds. `inputs` are the folders (their `.ts` files, as the tsconfig's
 * `include` globs) and files its compiler reads; a unit test checks them against the tsconfigs.
 * package-lock.json stands for node_modules: a dependency that changes may change the build.
 */
export const TARGETS = {
  // nest-cli.json → tsconfig.json; deleteOutDir empties dist/ first, so no output of a deleted source survives.
  service: {
    inputs: ['src', 'migrations', 'processor', 'tsconfig.json', 'nest-cli.json', 'package-lock.json'],
    outDir: 'dist',
    command: ['nest', 'build'],
  },
  // tsc leaves the output of a deleted source behind; nothing imports it (the build would have failed).
  examples: {
    inputs: ['examples', 'tsconfig.json', 'tsconfig.examples.json', 'package-lock.json'],
    outDir: 'dist-examples',
    command: ['tsc', '-p', 'tsconfig.examples.json'],
  },
};

// Written into the output folder after a successful build: the digest of the inputs that build read.
const STAMP_FILE = '.inputs-digest';

/**
 * One digest of every input: the path and contents of each `.ts` file under the input folders and of
 * each input file. Contents, not modification times: a checkout, a stash or a copy that keeps old
 * times still counts as a change, and a file touched but unchanged does not.
 */
export function inputsDigest(root, inputs) {
  const hash = createHash('sha256');
  for (const input of [...inputs].sort()) {
    const absolute = path.join(root, input);
    if (!existsSync(absolute)) {
      hash.update(`${input}\0missing\0`);
      continue;
    }
    for (const file of filesOf(root, input)) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update('\0');
  }
  return hash.digest('hex');
}

/** `input` itself when it is a file; else its `.ts` files, sorted, as paths relative to `root`. */
function filesOf(root, input) {
  const absolute = path.join(root, input);
  if (!statSync(absolute).isDirectory()) return [input];
  return readdirSync(absolute, { recursive: true, withFileTypes: true, encoding: 'utf8' })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** Whether `target`'s output in `root` was built from inputs other than the present ones (or never built). */
export function isStale(root, target, digest = inputsDigest(root, target.inputs)) {
  return staleness(root, target, digest) !== undefined;
}

/** Why `target` needs a build, as the line before it says; undefined when its output is current. */
function staleness(root, target, digest) {
  const stamp = path.join(root, target.outDir, STAMP_FILE);
  // A fresh clone (or a build that failed, which leaves no stamp) has nothing to compare with.
  if (!existsSync(stamp)) return 'no build yet';
  return readFileSync(stamp, 'utf8').trim() === digest ? undefined : 'its sources changed since the last build';
}

/**
 * Builds `target` when stale (or `always`), then stamps its output with the digest taken *before*
 * the build: a source edited while it runs makes the next call build again. A failed build leaves
 * no stamp. `run` runs the command and returns its exit status; `onBuild` hears of a build, and why
 * ('asked for', 'no build yet', 'its sources changed since the last build'), before it starts.
 * Returns whether it built.
 */
export function buildIfStale(root, target, { always = false, run = runCommand, onBuild = () => {} } = {}) {
  const digest = inputsDigest(root, target.inputs);
  const reason = always ? 'asked for' : staleness(root, target, digest);
  if (reason === undefined) return false;
  onBuild(target, reason);
  const stamp = path.join(root, target.outDir, STAMP_FILE);
  rmSync(stamp, { force: true });
  const status = run(root, target.command);
  if (status !== 0) throw new Error(`${target.command.join(' ')} failed (exit status ${status})`);
  mkdirSync(path.dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${digest}\n`);
  return true;
}

/** Runs a command of node_modules/.bin in `root`, its output on the caller's terminal. */
function runCommand(root, [command, ...args]) {
  const result = spawnSync(path.join(root, 'node_modules', '.bin', command), args, { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function main(argv) {
  const always = argv.includes('--always');
  const names = argv.filter((argument) => argument !== '--always');
  const unknown = names.find((name) => !Object.hasOwn(TARGETS, name));
  if (names.length === 0 || unknown !== undefined) {
    console.error(`usage: node scripts/build-if-stale.mjs [--always] <${Object.keys(TARGETS).join('|')}>…`);
    return 2;
  }
  const root = path.resolve(import.meta.dirname, '..');
  try {
    // On stderr: what the command run after the build prints on stdout stays its own.
    const onBuild = (target, reason) => console.error(`building ${target.outDir}/ (${target.command.join(' ')}): ${reason}`);
    for (const name of names) buildIfStale(root, TARGETS[name], { always, onBuild });
    return 0;
  } catch (error) {
    console.error(`error: ${error.message}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));

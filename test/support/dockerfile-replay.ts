import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, posix, relative } from 'node:path';
import { type DockerStage, dockerIgnore } from './dockerfile.js';

/** What replaying a stage left: its folder on this machine, its working directory and environment, its CMD. */
export interface ReplayedStage {
  readonly root: string;
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly cmd: readonly string[] | undefined;
  /** Every file its COPY lines copied, relative to its working directory. */
  readonly copied: readonly string[];
}

/**
 * Replays a Dockerfile's stages without Docker, each in its own folder under `into` standing for the
 * image's `/`: COPY copies exactly what Docker would send from `context` (`.dockerignore` applied,
 * `--from=<stage>` from that stage's folder), WORKDIR and ENV are followed, RUN runs through `sh -c`.
 *
 * One shortcut, said where it is taken: a RUN that starts with `npm ci` is not run (minutes, and the
 * network), nor what it chains (`&& npm cache clean --force`);
 * the working directory gets a link to `context`'s node_modules instead, which `npm ci` installed from
 * the same lock file — checked: the package.json and package-lock.json the stage copied must equal
 * `context`'s. With `--omit=dev` the link still holds the dev dependencies (a superset of what the
 * image gets). Every other RUN (the build) runs for real on exactly the copied files.
 *
 * An instruction it does not know fails the replay, so that a new one is taught here, not skipped.
 */
export function replayDockerfile(stages: readonly DockerStage[], context: string, into: string): Map<string, ReplayedStage> {
  const ignored = existsSync(join(context, '.dockerignore')) ? dockerIgnore(readFileSync(join(context, '.dockerignore'), 'utf8')) : () => false;
  const replayed = new Map<string, ReplayedStage>();
  stages.forEach((stage, index) => {
    const name = stage.name ?? String(index);
    replayed.set(name, replayStage(stage, join(into, name), context, ignored, replayed));
  });
  return replayed;
}

function replayStage(
  stage: DockerStage,
  root: string,
  context: string,
  ignored: (path: string) => boolean,
  earlier: ReadonlyMap<string, ReplayedStage>,
): ReplayedStage {
  let workdir = '/';
  let cmd: string[] | undefined;
  const env: Record<string, string> = {};
  const copied: string[] = [];
  const here = (path: string): string => join(root, posix.resolve(workdir, path));
  mkdirSync(root, { recursive: true });
  for (const { keyword, flags, args } of stage.instructions) {
    switch (keyword) {
      case 'WORKDIR':
        workdir = posix.resolve(workdir, args);
        mkdirSync(here('.'), { recursive: true });
        break;
      case 'ENV':
        for (const [, key, value] of args.matchAll(/(\w+)=(\S*)/g)) env[key!] = value!;
        break;
      case 'COPY': {
        const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
        if (flags.some((flag) => !flag.startsWith('--from='))) throw new Error(`COPY ${flags.join(' ')}: the replay knows only --from`);
        const sources = args.split(' ');
        const destination = sources.pop()!;
        const source = from === undefined ? { root: context, skip: ignored } : { root: earlier.get(from)!.root, skip: () => false };
        const intoFolder = destination.endsWith('/') || sources.length > 1;
        for (const path of sources) {
          const files = copyPath(source.root, from === undefined ? path : posix.resolve('/', path), here(destination), intoFolder, source.skip);
          copied.push(...files.map((file) => relative(here('.'), file)));
        }
        break;
      }
      case 'RUN':
        if (/^npm ci(\s|$)/.test(args)) linkNodeModules(context, here('.'));
        else run(args, here('.'), env);
        break;
      case 'CMD':
        cmd = JSON.parse(args) as string[];
        break;
      case 'EXPOSE':
      case 'USER':
      case 'HEALTHCHECK':
        break; // what the container does when it runs, not what the image holds
      default:
        throw new Error(`the Dockerfile replay does not know ${keyword}: teach it (test/support/dockerfile-replay.ts)`);
    }
  }
  return { root, workdir: here('.'), env, cmd, copied };
}

/** Copies `path` of `sourceRoot` as Docker's COPY does (a folder's contents; a file into a folder or as a file); returns the files written. */
function copyPath(sourceRoot: string, path: string, destination: string, intoFolder: boolean, skip: (path: string) => boolean): string[] {
  const relativePath = posix.normalize(path).replace(/^\/+/, '');
  const absolute = join(sourceRoot, relativePath);
  if (skip(relativePath) || !existsSync(absolute)) throw new Error(`COPY ${path}: not in the build context`);
  if (!statSync(absolute).isDirectory()) {
    const target = intoFolder ? join(destination, basename(relativePath)) : destination;
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(absolute, target);
    return [target];
  }
  const written: string[] = [];
  for (const entry of readdirSync(absolute, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = relative(sourceRoot, join(entry.parentPath, entry.name)).split('\\').join('/');
    if (skip(file)) continue;
    const target = join(destination, relative(absolute, join(sourceRoot, file)));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(sourceRoot, file), target);
    written.push(target);
  }
  return written;
}

function linkNodeModules(context: string, workdir: string): void {
  for (const file of ['package.json', 'package-lock.json']) {
    if (!existsSync(join(workdir, file)) || !readFileSync(join(workdir, file)).equals(readFileSync(join(context, file)))) {
      throw new Error(`RUN npm ci: ${file} was not copied from the context before it, so the context's node_modules does not stand for it`);
    }
  }
  symlinkSync(join(context, 'node_modules'), join(workdir, 'node_modules'), 'dir');
}

function run(command: string, cwd: string, env: Record<string, string>): void {
  // The Node that runs the tests is the image's release (test/unit/deployment-files.spec.ts): first on the PATH.
  const path = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  const result = spawnSync('sh', ['-c', command], { cwd, env: { ...process.env, ...env, PATH: path }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`RUN ${command} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
}

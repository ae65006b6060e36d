import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import type { BenchCounters } from './bench.module.js';
import { type CostPerRequest, CpuReadings } from './cpu-readings.js';
import { type BenchProcessor, startBenchProcessor } from './processor-process.js';
import { cpuByPackage, PERF_NODE_FLAGS, recordPerf, removePerfMap } from './perf-profile.js';
import { type CpuProfile, type SelfTime, selfTimeByPackage } from './profile-summary.js';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres.js';

/**
 * `npm run bench [-- --quick]`: the cost of exactly-once, measured side by side in one run against
 * the real service (its own process) on loopback and real PostgreSQL, charging through the local
 * processor (a third process, over HTTP). Prints a Markdown table and writes it as JSON to
 * bench/results/latest.json.
 */
const QUICK = process.argv.includes('--quick');
const PROFILE = process.argv.includes('--profile');
// Like --profile, with Linux perf's CPU-time samples instead of V8's (see bench/perf-profile.ts).
const PERF = process.argv.includes('--perf');
// Only the purge scenario, for working on it: its line, and bench/results/purge-timeline.json.
const PURGE_ONLY = process.argv.includes('--purge-only');
// Only the CPU target's lower bound (see lowerBound), in enough paired rounds to put an interval on it.
const LOWER_BOUND = process.argv.includes('--lower-bound');
const LOWER_BOUND_ROUNDS = 30;
// A round of 2 s holds 300–450 payments, and one garbage collection or scheduling hiccup moves its
// CPU by ±0.2: nine rounds and three purges, whose medians the targets take, hold still from run to run.
const PLAN = QUICK
  ? { seconds: 3, rounds: 5, roundSeconds: 0.6, sizeSeconds: 2, sizes: [0, 100_000], purgeRows: 100_000, purges: 1 }
  : { seconds: 10, rounds: 9, roundSeconds: 2, sizeSeconds: 5, sizes: [0, 100_000, 1_000_000], purgeRows: 1_000_000, purges: 3 };
const CONNECTIONS = 16;
const PORT = 3900;
const TOKEN = 'bench-token-0123456789abcdef';
const BASE = `http://127.0.0.1:${PORT}`;
// The bench server runs the floor app (bench/floor-app.ts) on the next port.
const FLOOR_BASE = `http://127.0.0.1:${PORT + 1}`;
const TARGETS = {
  firstOverBaseline: 0.85, replayOverBaseline: 1.5, firstCpuOverFloor: 1.25, replayCpuOverFloor: 0.75,
  firstRoundTrips: 3, replayRoundTrips: 1, purgeP99OverWithout: 1.1,
};
const HEADERS = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const REPLAY_KEYS = 500;
// In the conflict run, this many consecutive requests share one key.
const REQUESTS_PER_CONFLICT_KEY = 64;
// The load during the purge stops when the purge ends; this only bounds a purge that never does.
const MAX_PURGE_SECONDS = 300;
// The purge's load runs this long before anything is counted: its connections open, its first wave queues.
const PURGE_LOAD_WARM_UP_MS = 2_000;
// Windows as long as the purge to compare it with, from the load after it (about one more comes before it).
const PURGE_WINDOWS_AFTER = 5;
// The purge's expired keys are spread over this many past days, each day a partition the purge drops.
const EXPIRED_DAYS = 3;
// Packages listed per profile, most self time first.
const PROFILE_ROWS = 30;
// Two checkouts benchmarking against one server must not drop each other's database.
const BENCH_DATABASE = `pagos_bench_${createHash('sha256').update(process.cwd()).digest('hex').slice(0, 6)}`;

interface Measurement extends Partial<CostPerRequest> {
  readonly name: string;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly requests: number;
  readonly errors: number;
  readonly statuses: Record<string, number>;
}

type RequestFactory = () => { path: string; headers: Record<string, string>; body: string };

// Set up in main(), before any load.
let readings!: CpuReadings;

async function main(): Promise<void> {
  const { url, stop } = await database();
  const processor = await startBenchProcessor(url);
  const server = await startBenchServer(url, processor, PERF ? PERF_NODE_FLAGS : []);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  readings = new CpuReadings(counters, processor, db);
  try {
    if (PROFILE) await profileAll();
    else if (PERF) await perfAll(server.pid!);
    else if (PURGE_ONLY) console.log(purgeLine(await purgesUnderLoad(db)));
    else if (LOWER_BOUND) console.log(await lowerBound());
    else report(await measureAll(db));
  } finally {
    await db.end();
    server.kill('SIGTERM');
    await once(server, 'exit');
    if (PERF) removePerfMap(server.pid!);
    await processor.stop();
    await stop();
  }
}

async function measureAll(db: pg.Client) {
  await warmUp();
  // The scenarios alternate in short rounds, so drift on a shared machine hits all of them; the floor
  // and first executions run back to back, first one then the other, so a drift cancels in their ratio.
  const rounds = { floor: [] as Measurement[], claimFloor: [] as Measurement[], leastFirst: [] as Measurement[], baseline: [] as Measurement[], first: [] as Measurement[] };
  const scenarios: [Measurement[], () => Promise<Measurement>][] = [
    [rounds.floor, () => load('floor (bare Nest route, raw pg pool)', PLAN.roundSeconds, freshPayment('/floor/pagos', false), true, FLOOR_BASE)],
    [rounds.first, () => load('first execution', PLAN.roundSeconds, freshPayment('/pagos', true), true)],
    [rounds.baseline, () => load('baseline (no idempotency)', PLAN.roundSeconds, freshPayment('/bench/pagos-sin-idempotencia', false), true)],
    [rounds.claimFloor, () => load('floor + claim and completion', PLAN.roundSeconds, freshPayment('/floor/pagos-idempotentes', true), true, FLOOR_BASE)],
    [rounds.leastFirst, () => load('floor + claim, completion, event, interceptor', PLAN.roundSeconds, freshPayment('/floor/pagos-minimos', true), true, FLOOR_BASE)],
  ];
  for (let round = 0; round < PLAN.rounds; round++) {
    for (const [measurements, measure] of round % 2 === 0 ? scenarios : [...scenarios].reverse()) measurements.push(await measure());
  }
  const floor = median(rounds.floor);
  const claimFloor = median(rounds.claimFloor);
  const leastFirst = median(rounds.leastFirst);
  const baseline = median(rounds.baseline);
  const first = median(rounds.first);
  // Paired by round: a round's floor and first execution ran seconds apart, under the same contention.
  const overFloorByRound = (series: Measurement[]) => series.map((m, i) => round(m.serviceCpuMsPerRequest! / rounds.floor[i]!.serviceCpuMsPerRequest!, 2));
  const firstCpuOverFloorByRound = overFloorByRound(rounds.first);
  const cpuOverFloorByRound = { claimFloor: overFloorByRound(rounds.claimFloor), leastFirst: overFloorByRound(rounds.leastFirst), baseline: overFloorByRound(rounds.baseline) };
  const replay = await load('replay', PLAN.seconds, await completedKeys(), true);
  const conflicts = await load('in-flight conflicts', PLAN.seconds, fewKeys());

  const growth = [];
  for (const size of PLAN.sizes) {
    await setLiveRows(db, size);
    growth.push({
      liveRows: size,
      first: await load(`first @ ${size} rows`, PLAN.sizeSeconds, freshPayment('/pagos', true)),
      replay: await load(`replay @ ${size} rows`, PLAN.sizeSeconds, await completedKeys()),
    });
  }
  const purge = await purgesUnderLoad(db);
  return { floor, claimFloor, leastFirst, baseline, first, firstCpuOverFloorByRound, cpuOverFloorByRound, replay, conflicts, growth, purge };
}

/**
 * `npm run bench -- --lower-bound`: the least a first execution in the service's shape can cost
 * against the floor (`/floor/pagos-minimos`: the statements the issue's three phases send, and an
 * interceptor that does nothing; no code of the service), the same with the checks every payment
 * must pass (`/floor/pagos-minimos-verificados`), and the first execution itself, each paired
 * with the floor of its round, in 30 rounds: medians, with the 95% interval of each median (the
 * order statistics that bracket it).
 */
async function lowerBound(): Promise<string> {
  await warmUp();
  const floor = { name: 'floor', next: freshPayment('/floor/pagos', false), base: FLOOR_BASE };
  const compared = [
    { name: 'least first execution in the shape', next: freshPayment('/floor/pagos-minimos', true), base: FLOOR_BASE, ratios: [] as number[] },
    { name: 'the same with its token, body and fingerprint checked', next: freshPayment('/floor/pagos-minimos-verificados', true), base: FLOOR_BASE, ratios: [] as number[] },
    { name: 'first execution', next: freshPayment('/pagos', true), base: BASE, ratios: [] as number[] },
  ];
  for (let round = 0; round < LOWER_BOUND_ROUNDS; round++) {
    const scenarios = [floor, ...compared];
    const cpu = new Map<object, number>();
    for (const scenario of round % 2 === 0 ? scenarios : scenarios.reverse()) {
      cpu.set(scenario, (await load(scenario.name, PLAN.roundSeconds, scenario.next, true, scenario.base)).serviceCpuMsPerRequest!);
    }
    for (const scenario of compared) scenario.ratios.push(cpu.get(scenario)! / cpu.get(floor)!);
  }
  return compared
    .map(({ name, ratios }) => {
      const [median, low, high] = medianWithInterval(ratios);
      const above = ratios.filter((ratio) => ratio > TARGETS.firstCpuOverFloor).length;
      return `${name} ÷ floor, service CPU: median ${median} (95% interval ${low}–${high}), ${above} of ${ratios.length} rounds above ${TARGETS.firstCpuOverFloor}`;
    })
    .join('\n');
}

/** The median and the order statistics around it that hold the true median 95% of the time. */
function medianWithInterval(values: number[]): [number, number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const spread = (1.96 * Math.sqrt(sorted.length)) / 2;
  const at = (rank: number) => round(sorted[Math.min(sorted.length, Math.max(1, Math.round(rank))) - 1]!, 2);
  return [round(medianOf(sorted), 2), at(sorted.length / 2 - spread), at(1 + sorted.length / 2 + spread)];
}

/** The service's and the floor's first requests, before anything is measured. */
async function warmUp(): Promise<void> {
  await load('warm-up', 2, freshPayment('/pagos', true));
  await load('warm-up (floor)', 2, freshPayment('/floor/pagos', false), false, FLOOR_BASE);
}

function freshPayment(route: string, idempotent: boolean): RequestFactory {
  return () => ({
    path: route,
    headers: idempotent ? { ...HEADERS, 'idempotency-key': randomUUID() } : HEADERS,
    body: JSON.stringify({ numeroOrden: `B-${randomUUID()}`, monto: 1999, moneda: 'EUR', token: 'tok_visa' }),
  });
}

async function completedKeys(): Promise<RequestFactory> {
  const requests = Array.from({ length: REPLAY_KEYS }, freshPayment('/pagos', true));
  // As many at a time as the load has connections: each is a payment through the processor.
  let prepared = 0;
  const prepare = async () => {
    while (prepared < requests.length) {
      const request = requests[prepared++]!;
      const response = await fetch(BASE + request.path, { method: 'POST', headers: request.headers, body: request.body });
      if (response.status !== 201) throw new Error(`could not prepare a replay key: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, prepare));
  let next = 0;
  return () => requests[next++ % requests.length]!;
}

function fewKeys(): RequestFactory {
  let sent = 0;
  let current = freshPayment('/pagos', true)();
  return () => {
    if (sent++ % REQUESTS_PER_CONFLICT_KEY === 0) current = freshPayment('/pagos', true)();
    return current;
  };
}

/** The scenarios the profiles cover, once the service and the floor are warm. */
async function profiledScenarios(): Promise<(readonly [string, RequestFactory, string])[]> {
  await warmUp();
  const replays = await completedKeys();
  return [
    ['floor', freshPayment('/floor/pagos', false), FLOOR_BASE],
    ['first', freshPayment('/pagos', true), BASE],
    ['baseline', freshPayment('/bench/pagos-sin-idempotencia', false), BASE],
    ['replay', replays, BASE],
  ];
}

/**
 * `npm run bench -- --profile`: CPU profiles of the service under the floor, first executions,
 * the baseline and replays, written to bench/results/*.cpuprofile (open them in Chrome DevTools),
 * with self time per package.
 */
async function profileAll(): Promise<void> {
  for (const [scenario, next, base] of await profiledScenarios()) {
    await fetch(`${BASE}/bench/profile/start`, { method: 'POST' });
    const measurement = await load(`${scenario} (profiled)`, PLAN.seconds, next, false, base);
    const profile = (await (await fetch(`${BASE}/bench/profile/stop`, { method: 'POST' })).json()) as CpuProfile;
    const file = path.resolve(`bench/results/${scenario}.cpuprofile`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(profile));
    const times = selfTimeByPackage(profile);
    const total = times.reduce((sum, time) => sum + time.ms, 0);
    console.log(`\n${scenario}: ${measurement.requests} requests, ${round(total / measurement.requests, 3)} ms of samples (not idle) per request; profile in ${path.relative(process.cwd(), file)}\n`);
    printByPackage('self time', times, total, measurement.requests);
  }
}

/**
 * `npm run bench -- --perf`: the service's CPU time per request in the same scenarios, by package,
 * from perf's samples of its process (CPU only: see bench/perf-profile.ts), and what first
 * executions spend beyond the floor, package by package: where the CPU target's margin goes.
 */
async function perfAll(pid: number): Promise<void> {
  const perRequest = new Map<string, { total: number; byPackage: Map<string, number> }>();
  for (const [scenario, next, base] of await profiledScenarios()) {
    const file = `/tmp/pagos-bench-${pid}-${scenario}.perf`;
    const recording = await recordPerf(pid, file);
    const measurement = await load(`${scenario} (perf)`, PLAN.seconds, next, false, base);
    await recording.stop();
    const cpu = await cpuByPackage(file);
    const byPackage = new Map(cpu.byPackage.map(({ name, ms }) => [name, ms / measurement.requests]));
    perRequest.set(scenario, { total: cpu.totalMs / measurement.requests, byPackage });
    console.log(`\n${scenario}: ${measurement.requests} requests, ${round(cpu.totalMs / measurement.requests, 3)} ms of CPU per request\n`);
    printByPackage('CPU time in', cpu.byPackage, cpu.totalMs, measurement.requests);
  }
  const floor = perRequest.get('floor')!;
  const first = perRequest.get('first')!;
  const extra = [...new Set([...floor.byPackage.keys(), ...first.byPackage.keys()])]
    .map((name) => ({ name, ms: (first.byPackage.get(name) ?? 0) - (floor.byPackage.get(name) ?? 0) }))
    .sort((a, b) => b.ms - a.ms);
  console.log(`\nfirst execution − floor: ${round(first.total - floor.total, 3)} ms of CPU per request (first ÷ floor ${round(first.total / floor.total, 2)})\n`);
  console.log('| package | ms/request |\n| --- | ---: |');
  for (const { name, ms } of extra.slice(0, PROFILE_ROWS)) console.log(`| ${name} | ${round(ms, 3)} |`);
}

/** The first PROFILE_ROWS of `times` (most first), per request and as a share of `total`. */
function printByPackage(heading: string, times: readonly SelfTime[], total: number, requests: number): void {
  console.log(`| ${heading} | ms/request | share |\n| --- | ---: | ---: |`);
  for (const { name, ms } of times.slice(0, PROFILE_ROWS)) console.log(`| ${name} | ${round(ms / requests, 3)} | ${round((100 * ms) / total, 1)}% |`);
}

/** One load; with `countRoundTrips`, also what a request cost the service, PostgreSQL and the processor. */
async function load(name: string, seconds: number, next: RequestFactory, countRoundTrips = false, base = BASE): Promise<Measurement> {
  const before = countRoundTrips ? await readings.read() : undefined;
  const measurement = measured(name, await drive(seconds, next, base).result);
  if (!before) return measurement;
  return { ...measurement, ...(await readings.costBetween(before, await readings.read())) };
}

/** A load of `CONNECTIONS` connections for `seconds` (or until stopped), and its result once it ends. */
function drive(seconds: number, next: RequestFactory, base = BASE): { instance: autocannon.Instance; result: Promise<autocannon.Result> } {
  let instance!: autocannon.Instance;
  const options = {
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST' as const, setupRequest: (request: autocannon.Request) => ({ ...request, ...next() }) }],
  };
  const result = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(options, (error, done) => (error ? reject(error) : resolve(done)));
  });
  return { instance, result };
}

function measured(name: string, result: autocannon.Result): Measurement {
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]));
  const measurement: Measurement = {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    statuses,
  };
  console.error(`  ${name}: ${measurement.rps} req/s, p99 ${measurement.p99} ms, statuses ${JSON.stringify(statuses)}`);
  return measurement;
}

/** The purge scenario PLAN.purges times: its ratio varies by ±0.2 from one purge to the next, as a p99 of a thousand requests does. */
async function purgesUnderLoad(db: pg.Client) {
  const trials = [];
  for (let trial = 0; trial < PLAN.purges; trial++) trials.push(await purgeUnderLoad(db));
  const ratios = trials.map((trial) => round(trial.during.p99 / trial.without.p99, 2));
  if (PURGE_ONLY) writeResult('purge-timeline.json', trials.map(({ timeline }) => timeline));
  return { trials: trials.map(({ timeline: _timeline, ...trial }) => trial), ratios, ratio: medianOf(ratios) };
}

/**
 * 1M (or, quick, 100k) expired keys purged while first executions run: the keys lie in the partitions
 * of the last EXPIRED_DAYS days, whose bounds have passed, so the purge detaches and drops them. One
 * steady load runs before, during and after the purge; the requests in flight at any moment of the
 * purge are compared with the rest of the same load (its warm-up left out): same connections, same
 * table, the purge the only difference.
 */
async function purgeUnderLoad(db: pg.Client) {
  await setLiveRows(db, 0);
  await db.query(`SELECT create_daily_partitions('idempotency_keys', now() - make_interval(days => $1::int), now())`, [EXPIRED_DAYS]);
  await insertKeys(db, PLAN.purgeRows, `now() - make_interval(days => 1 + i % ${EXPIRED_DAYS})`);
  await settle(db);
  // The load generator shares this process: a first fetch here (its lazy set-up) would stall it.
  await counters();
  const responses = new ResponseLog();
  const purgeLoad = drive(MAX_PURGE_SECONDS, freshPayment('/pagos', true));
  purgeLoad.instance.on('response', (_client, _status, _bytes, responseTime) => responses.add(responseTime));
  await delay(PURGE_LOAD_WARM_UP_MS + PLAN.sizeSeconds * 1000);
  const purgeStarted = performance.now();
  const { purged, ms } = await fetch(`${BASE}/bench/purge`, { method: 'POST' }).then((r) => r.json() as Promise<{ purged: number; ms: number }>);
  const purgeEnded = performance.now();
  // Enough of the same load after it for several windows as long as the purge (it pauses between steps).
  await delay(Math.max(PLAN.sizeSeconds * 1000, PURGE_WINDOWS_AFTER * (purgeEnded - purgeStarted)));
  purgeLoad.instance.stop();
  measured('first, around the purge', await purgeLoad.result);
  const { during, without } = responses.split(purgeStarted, purgeEnded, PURGE_LOAD_WARM_UP_MS);
  const timeline = { purgeMs: purgeEnded - purgeStarted, requests: responses.relativeTo(purgeStarted) };
  return { rows: PLAN.purgeRows, purged, purgeMs: ms, without, during, timeline };
}

/** The requests of one load: when each started and how long it took, in the bench's clock. */
class ResponseLog {
  private readonly started = performance.now();
  private readonly requests: { start: number; end: number }[] = [];

  add(responseTime: number): void {
    const end = performance.now();
    this.requests.push({ start: end - responseTime, end });
  }

  /** Each request's start and end in ms from `origin`. */
  relativeTo(origin: number): { start: number; end: number }[] {
    return this.requests.map(({ start, end }) => ({ start: Math.round(start - origin), end: Math.round(end - origin) }));
  }

  /**
   * p99 of the requests in flight at some moment of [from, to], against the median p99 of windows
   * as long elsewhere in the same load (its warm-up left out): a p99 of a hundred requests is about
   * their slowest, so it is compared with others of the same size, not with the whole load's.
   */
  split(from: number, to: number, warmUpMs: number): { during: Percentile; without: Percentile & { windows: number } } {
    const measured = this.requests.filter((r) => r.start >= this.started + warmUpMs);
    const inFlight = (a: number, b: number) => measured.filter((r) => r.start <= b && r.end >= a).map((r) => r.end - r.start);
    const length = Math.max(to - from, 1);
    const windows: Percentile[] = [];
    const lastEnd = Math.max(...measured.map((r) => r.end));
    for (let start = this.started + warmUpMs; start + length <= lastEnd; start += length) {
      if (start <= to && start + length >= from) continue;
      windows.push(percentile99(inFlight(start, start + length)));
    }
    return {
      during: percentile99(inFlight(from, to)),
      without: { p99: medianOf(windows.map((w) => w.p99)), requests: medianOf(windows.map((w) => w.requests)), windows: windows.length },
    };
  }
}

interface Percentile {
  readonly p99: number;
  readonly requests: number;
}

function percentile99(times: number[]): Percentile {
  const sorted = [...times].sort((a, b) => a - b);
  return { p99: Math.round(sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0), requests: sorted.length };
}

/** The run with the median throughput. */
function median(runs: Measurement[]): Measurement {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
}

function medianOf(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

async function setLiveRows(db: pg.Client, rows: number): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE scope = 'filler'`);
  if (rows > 0) await insertKeys(db, rows, "now() + interval '1 day'");
  await settle(db);
}

/**
 * Leaves the table as steady traffic would: statistics current, dead rows vacuumed, and the bulk
 * writes of the set-up flushed by a checkpoint, so their write-out doesn't land in the next measurement.
 */
async function settle(db: pg.Client): Promise<void> {
  await db.query('VACUUM ANALYZE idempotency_keys');
  await db.query('CHECKPOINT');
}

async function insertKeys(db: pg.Client, rows: number, expiresAt: string): Promise<void> {
  await db.query(
    `INSERT INTO idempotency_keys (scope, key, request_hash, status, operation_id, response_status, response_headers, response_body, created_at, expires_at)
     SELECT 'filler', md5(random()::text) || i, repeat('a', 64), 'completed', gen_random_uuid(), 201,
            '{"content-type":"application/json; charset=utf-8"}', repeat('x', 160), now(), ${expiresAt}
       FROM generate_series(1, $1::int) AS i`,
    [rows],
  );
}

async function counters(): Promise<BenchCounters> {
  const response = await fetch(`${BASE}/bench/counters`);
  return (await response.json()) as BenchCounters;
}

function report(results: Awaited<ReturnType<typeof measureAll>>): void {
  const { floor, claimFloor, leastFirst, baseline, first, firstCpuOverFloorByRound, cpuOverFloorByRound, replay, conflicts, growth, purge } = results;
  const cpuOverFloor = (m: Measurement) => (m.serviceCpuMsPerRequest === undefined ? undefined : round(m.serviceCpuMsPerRequest / floor.serviceCpuMsPerRequest!, 2));
  const ratios = {
    firstOverBaseline: round(first.rps / baseline.rps, 2),
    replayOverBaseline: round(replay.rps / baseline.rps, 2),
    firstCpuOverFloor: medianOf(firstCpuOverFloorByRound),
    replayCpuOverFloor: cpuOverFloor(replay)!,
    purgeP99OverWithout: purge.ratio,
  };
  const verdict = (met: boolean) => (met ? 'met' : '**missed**');
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const postgresCell = (m: Measurement) => (m.postgresCpuMsPerRequest === undefined ? '–' : `${m.postgresCpuMsPerRequest} (${m.processorPostgresCpuMsPerRequest})`);
  const row = (m: Measurement) =>
    `| ${m.name} | ${m.rps} | ${m.p50} | ${m.p99} | ${m.p999} | ${m.errors} | ${m.roundTripsPerRequest ?? '–'} | ${m.serviceCpuMsPerRequest ?? '–'} | ${cpuOverFloor(m) ?? '–'} | ${postgresCell(m)} | ${m.processorCpuMsPerRequest ?? '–'} | ${JSON.stringify(m.statuses)} |`;
  const lines = [
    `Machine: ${machine}; ${CONNECTIONS} connections; ${QUICK ? 'quick' : 'full'} run of ${PLAN.seconds} s per scenario (floor, baseline and first execution: ${PLAN.rounds} alternating rounds of ${PLAN.roundSeconds} s, medians).`,
    '',
    '| scenario | req/s | p50 ms | p99 ms | p99.9 ms | errors | PG round trips/req | service CPU ms/req | CPU × floor | PostgreSQL CPU ms/req (the processor\'s statements) | processor CPU ms/req | statuses |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...[floor, claimFloor, leastFirst, baseline, first, replay, conflicts].map(row),
    '',
    `| ratio | value | target | |`,
    '| --- | ---: | ---: | --- |',
    `| first execution ÷ baseline (throughput) | ${ratios.firstOverBaseline} | ≥ ${TARGETS.firstOverBaseline} | ${verdict(ratios.firstOverBaseline >= TARGETS.firstOverBaseline)} |`,
    `| replay ÷ baseline (throughput) | ${ratios.replayOverBaseline} | ≥ ${TARGETS.replayOverBaseline} | ${verdict(ratios.replayOverBaseline >= TARGETS.replayOverBaseline)} |`,
    `| first execution service CPU ÷ floor service CPU (median of the rounds' ratios: ${firstCpuOverFloorByRound.join(', ')}) | ${ratios.firstCpuOverFloor} | ≤ ${TARGETS.firstCpuOverFloor} | ${verdict(ratios.firstCpuOverFloor <= TARGETS.firstCpuOverFloor)} |`,
    `| replay service CPU ÷ floor service CPU | ${ratios.replayCpuOverFloor} | ≤ ${TARGETS.replayCpuOverFloor} | ${verdict(ratios.replayCpuOverFloor <= TARGETS.replayCpuOverFloor)} |`,
    `| first execution PG round trips | ${first.roundTripsPerRequest} | ≤ ${TARGETS.firstRoundTrips} | ${verdict(first.roundTripsPerRequest! <= TARGETS.firstRoundTrips)} |`,
    `| replay PG round trips | ${replay.roundTripsPerRequest} | ≤ ${TARGETS.replayRoundTrips} | ${verdict(replay.roundTripsPerRequest! <= TARGETS.replayRoundTrips)} |`,
    `| first p99 during the purge ÷ without (median of ${purge.ratios.length} purges: ${purge.ratios.join(', ')}) | ${ratios.purgeP99OverWithout} | ≤ ${TARGETS.purgeP99OverWithout} | ${verdict(ratios.purgeP99OverWithout <= TARGETS.purgeP99OverWithout)} |`,
    '',
    'The CPU targets compare the service\'s own CPU (its process, where the floor and the routes make the same processor calls through the same adapter); ' +
      'the processor\'s process and PostgreSQL are not in them. The throughput targets compare requests per second with all three sharing this machine\'s cores.',
    ...processorShare(first),
    ...bounds({ floor, claimFloor, baseline, first }, cpuOverFloorByRound),
    '',
    '| live rows in idempotency_keys | first req/s | first p99 ms | replay req/s | replay p99 ms |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...growth.map((g) => `| ${g.liveRows} | ${g.first.rps} | ${g.first.p99} | ${g.replay.rps} | ${g.replay.p99} |`),
    '',
    purgeLine(purge),
  ];
  console.log(lines.join('\n'));
  writeResult('latest.json', { date: new Date().toISOString(), machine, quick: QUICK, ratios, ...results, markdown: lines.join('\n') });
}

function writeResult(name: string, result: object): void {
  const file = path.resolve('bench/results', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(result, null, 2));
}

function purgeLine({ trials, ratios, ratio }: Awaited<ReturnType<typeof purgesUnderLoad>>): string {
  const lines = trials.map(
    ({ rows, purged, purgeMs, during, without }, i) =>
      `Purge ${i + 1}, of ${rows} expired rows during first executions: ${purged} purged in ${purgeMs} ms; ` +
      `first p99 ${during.p99} ms over the ${during.requests} requests in flight during it, against ${without.p99} ms, ` +
      `the median p99 of ${without.windows} windows as long elsewhere in the same load (about ${without.requests} requests each) (×${ratios[i]}).`,
  );
  return [...lines, ...(trials.length > 1 ? [`Median of the ${trials.length} purges: ×${ratio}.`] : [])].join('\n');
}

/** What the processor costs a first execution: its process, and its statements in PostgreSQL. */
function processorShare(first: Measurement): string[] {
  const { serviceCpuMsPerRequest: service, postgresCpuMsPerRequest: postgres, processorCpuMsPerRequest: processorCpu } = first;
  if (service === undefined || postgres === undefined || processorCpu === undefined) return [];
  const total = service + postgres + processorCpu;
  const percent = (ms: number) => `${round((100 * ms) / total, 1)}%`;
  return [
    `The processor's share of a first execution: its process ${processorCpu} ms of CPU per request, ${percent(processorCpu)} of service + PostgreSQL + processor ` +
      `(${round(total, 2)} ms); with its statements in PostgreSQL (${first.processorPostgresCpuMsPerRequest} ms), ${percent(processorCpu + first.processorPostgresCpuMsPerRequest!)}.`,
  ];
}

/**
 * What bounds the two first-execution targets, from the same rounds: what the floor costs with the
 * claim and completion statements, then with the event's statement and an interceptor that does
 * nothing (the least a first execution in the service's shape sends and crosses), each paired with
 * its round's floor; and service + PostgreSQL + processor CPU of the baseline against the first
 * execution's, which caps their throughput ratio while all share this machine's cores.
 */
function bounds(
  { floor, claimFloor, baseline, first }: Record<'floor' | 'claimFloor' | 'baseline' | 'first', Measurement>,
  byRound: Record<'claimFloor' | 'leastFirst' | 'baseline', number[]>,
): string[] {
  const total = (m: Measurement) =>
    m.postgresCpuMsPerRequest === undefined || m.processorCpuMsPerRequest === undefined
      ? undefined
      : m.serviceCpuMsPerRequest! + m.postgresCpuMsPerRequest + m.processorCpuMsPerRequest;
  const paired = (ratios: number[]) => `×${medianOf(ratios)} (rounds ${ratios.join(', ')})`;
  const lines = [
    `CPU over the floor, medians of the rounds' ratios: the claim and completion statements alone ${paired(byRound.claimFloor)}; ` +
      `with the event's statement and a pass-through interceptor, and nothing else ${paired(byRound.leastFirst)}; the baseline ${paired(byRound.baseline)}.`,
    `The claim and completion statements alone, on the floor: ×${round(claimFloor.rps / floor.rps, 2)} its throughput; ` +
      `first execution CPU ÷ that floor ${round(first.serviceCpuMsPerRequest! / claimFloor.serviceCpuMsPerRequest!, 2)}.`,
  ];
  const [baselineTotal, firstTotal] = [total(baseline), total(first)];
  if (baselineTotal !== undefined && firstTotal !== undefined) {
    lines.push(`Service + PostgreSQL + processor CPU per request: baseline ${round(baselineTotal, 2)} ms, first execution ${round(firstTotal, 2)} ms (ratio ${round(baselineTotal / firstTotal, 2)}).`);
  }
  return lines;
}

async function database(): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = process.env.DATABASE_URL
    ? { url: process.env.DATABASE_URL, stop: async () => undefined }
    : await startEmbeddedPostgres({ dataDir: '.data/bench-pg', port: 54330, database: 'postgres', persistent: false });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${BENCH_DATABASE}`);
  await admin.end();
  const url = new URL(server.url);
  url.pathname = `/${BENCH_DATABASE}`;
  return { url: url.toString(), stop: server.stop };
}

async function startBenchServer(databaseUrl: string, processor: BenchProcessor, nodeFlags: readonly string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeFlags, path.resolve('dist-bench/bench/bench-server.js')], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      STRIPE_API_URL: processor.url,
      STRIPE_SECRET_KEY: processor.secretKey,
      PORT: String(PORT),
      API_TOKENS: `bench:${TOKEN}`,
      // The purge runs only when the bench asks for it.
      IDEMPOTENCY_PURGE_CRON: '0 0 0 1 1 *',
      // Both routes pass the rate limiter, set out of reach (a million a second; replays from memory
      // passed 10,000): its cost is measured, not its refusals. A one-second window keeps its
      // per-client bookkeeping to about a second of hits, as production's limit keeps it to RATE_LIMIT_REQUESTS.
      RATE_LIMIT_REQUESTS: '1000000',
      RATE_LIMIT_WINDOW_SECONDS: '1',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return child;
}

function round(value: number, digits: number): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

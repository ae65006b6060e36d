import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { packageOfScript, type SelfTime } from './profile-summary.js';

// A sample every 250 µs of CPU: a 10 s scenario of 300 payments a second gives about 20,000.
const SAMPLES_PER_SECOND = 4_000;
// perf needs a moment to attach before the load it should see starts.
const ATTACH_MS = 500;

/** The flags the profiled Node process needs: a map of its JIT code for perf, and a frame per interpreted function. */
export const PERF_NODE_FLAGS = ['--perf-basic-prof', '--interpreted-frames-native-stack'];

/** CPU time of one process, by where it went (most first), from Linux perf's `cpu-clock` samples. */
export interface CpuByPackage {
  readonly totalMs: number;
  readonly byPackage: readonly SelfTime[];
}

/**
 * Records `pid`'s CPU samples into `file` until stopped. Unlike V8's profiler, whose samples count
 * wall time while the thread is not idle (a write that wakes the database is charged for the wait
 * after it), `cpu-clock` samples a thread only while it runs: the shares add up to CPU time. Every
 * thread is sampled (the garbage collector's and the compiler's too), and kernel time is included.
 */
export async function recordPerf(pid: number, file: string): Promise<{ stop: () => Promise<void> }> {
  const perf: ChildProcess = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(SAMPLES_PER_SECOND), '-g', '-p', String(pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let failure = '';
  perf.stderr!.on('data', (chunk: Buffer) => (failure += chunk.toString()));
  const exited = once(perf, 'exit');
  await Promise.race([delay(ATTACH_MS), exited]);
  if (perf.exitCode !== null) throw new Error(`perf record failed (is linux-perf installed, and may this user trace ${pid}?): ${failure.trim()}`);
  return {
    stop: async () => {
      perf.kill('SIGINT');
      await exited;
    },
  };
}

/**
 * Each sample charged to the innermost JavaScript function on its stack (with the builtins, runtime
 * and system calls it called), grouped by package as the V8 summary groups them. A sample with no
 * JavaScript on its stack is the garbage collector, the event loop (waiting and reading sockets), or
 * another of V8's threads (the optimizing compiler, concurrent marking).
 */
export async function cpuByPackage(file: string): Promise<CpuByPackage> {
  // Streamed: `perf script` prints every sample's stack, hundreds of MB for a 10 s recording.
  const script = spawn('perf', ['script', '-i', file, '-F', 'comm,ip,sym'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = once(script, 'exit');
  const samples = new Map<string, number>();
  let sample: string[] = [];
  const count = () => {
    const [thread, ...frames] = sample;
    sample = [];
    if (thread === undefined) return;
    const name = whereSpent(thread, frames.map((frame) => frame.slice(frame.indexOf(' ') + 1)));
    samples.set(name, (samples.get(name) ?? 0) + 1);
  };
  for await (const line of createInterface({ input: script.stdout })) {
    const trimmed = line.trim();
    if (trimmed) sample.push(trimmed);
    else count();
  }
  count();
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`perf script failed on ${file} (${code})`);
  rmSync(file, { force: true });
  const ms = (samplesCounted: number) => (samplesCounted * 1000) / SAMPLES_PER_SECOND;
  const total = [...samples.values()].reduce((sum, n) => sum + n, 0);
  const byPackage = [...samples].map(([name, n]) => ({ name, ms: ms(n) })).sort((a, b) => b.ms - a.ms);
  return { totalMs: ms(total), byPackage };
}

/** Removes the JIT map `--perf-basic-prof` wrote for `pid` (it grows for as long as the process runs): once it has exited. */
export function removePerfMap(pid: number): void {
  rmSync(`/tmp/perf-${pid}.map`, { force: true });
}

function whereSpent(thread: string, symbols: readonly string[]): string {
  const script = symbols.find((symbol) => symbol.startsWith('JS:'));
  if (script) return packageOfScript(script);
  if (symbols.some((symbol) => /Scavenge|MarkCompact|Heap::|Sweeper|ConcurrentMarking/.test(symbol))) return '(garbage collector)';
  if (!thread.startsWith('node-MainThread')) return '(V8 threads: compiler, other)';
  return symbols.some((symbol) => symbol.startsWith('uv_run')) ? '(event loop)' : '(native)';
}

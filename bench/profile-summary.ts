/** The parts of a V8 .cpuprofile that a self-time summary needs. */
export interface CpuProfile {
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string } }>;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly name: string;
  readonly ms: number;
}

/**
 * Self time per package: node_modules/<package>, `pagos <file>` for the service's own code, `node:<module>`
 * for Node's JavaScript, and V8's own entries ((garbage collector), (program), native functions such as
 * writev). Idle time is left out: what remains is where the process's time went.
 */
export function selfTimeByPackage(profile: CpuProfile): SelfTime[] {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const name = packageOf(frames.get(id)!);
    if (name === '(idle)') return;
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[index + 1] ?? 0) / 1000);
  });
  return [...totals].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
}

/** The package of a JIT frame as `--perf-basic-prof` names it: `JS:*'name node:net:1293:42`, `JS:+ file:///…/x.js:7:49`. */
export function packageOfScript(symbol: string): string {
  const location = symbol.slice(symbol.lastIndexOf(' ') + 1).replace(/:\d+:\d+$/, '');
  return packageOf({ functionName: symbol, url: location.startsWith('JS:') ? '' : location });
}

function packageOf({ functionName, url }: { functionName: string; url: string }): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  // node:internal/* is a quarter of a payment's CPU: by its module (node:internal/streams, …/process).
  if (url.startsWith('node:')) return url.split('/').slice(0, url.startsWith('node:internal/') ? 2 : 1).join('/');
  const own = /\/dist-bench\/(.*)$/.exec(url);
  return own ? `pagos ${own[1]}` : url;
}

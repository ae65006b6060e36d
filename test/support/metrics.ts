/** Reads one sample from a Prometheus text exposition: the value of `name` with exactly these labels. */
export function sampleOf(exposition: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',');
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = (match[2] ?? '').split(',').filter(Boolean).sort().join(',');
    if (found === wanted) return Number(match[3]);
  }
  return undefined;
}

export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return response.text();
}

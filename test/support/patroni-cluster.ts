import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { PostgresCluster } from './postgres-cluster.js';
import { asPostgres, giveToPostgres } from './postgres-os-user.js';
import { waitFor } from './waiting.js';

const SCOPE = 'pagos';

export interface PatroniNode {
  readonly name: string;
  readonly pgPort: number;
  readonly restPort: number;
  readonly dataDir: string;
  readonly configFile: string;
  process: ChildProcess | undefined;
}

interface Member {
  readonly name: string;
  readonly role: 'leader' | 'sync_standby' | 'replica' | string;
  readonly state: string;
  readonly timeline?: number;
}

/**
 * docker-compose.yml's `ha` profile without containers: one etcd, two Patroni nodes (each its own
 * PostgreSQL on this machine's binaries, as the OS user `postgres` when run as root) in
 * `synchronous_mode`, and HAProxy in front, sending connections only to the node whose Patroni REST
 * API answers `GET /primary` with 200. Timings are short so a test's failover takes seconds: the
 * leader key lives `ttl` 10 s, Patroni loops every second. Every process runs as a child of the test,
 * each in a process group of its own, and `stop()` kills them all and removes the temp directory.
 */
export class PatroniCluster {
  private etcd: ChildProcess | undefined;
  private haproxy: ChildProcess | undefined;
  private readonly logs = new Map<string, string>();

  private constructor(
    private readonly dir: string,
    readonly nodes: readonly PatroniNode[],
    private readonly etcdPorts: { client: number; peer: number },
    readonly proxyPort: number,
  ) {}

  static async start(): Promise<PatroniCluster> {
    const dir = mkdtempSync(path.join(tmpdir(), 'pagos-patroni-'));
    giveToPostgres(dir);
    const [client, peer, proxyPort, ...nodePorts] = await Promise.all(Array.from({ length: 7 }, () => freePort()));
    const nodes = [0, 1].map((i) => ({
      name: `node${i + 1}`, pgPort: nodePorts[2 * i], restPort: nodePorts[2 * i + 1],
      dataDir: path.join(dir, `node${i + 1}`), configFile: path.join(dir, `node${i + 1}.yml`), process: undefined,
    }));
    const cluster = new PatroniCluster(dir, nodes, { client, peer }, proxyPort);
    try {
      cluster.startEtcd();
      for (const node of nodes) cluster.writeConfig(node);
      // The first node bootstraps alone, so which one leads is known; the second clones it.
      cluster.startNode(nodes[0]);
      await waitFor('the first Patroni node to lead', async () => (await cluster.members()).some((m) => m.role === 'leader' && m.state === 'running'), 60_000, 200);
      cluster.startNode(nodes[1]);
      cluster.startHaproxy();
      await cluster.waitForSyncPair();
    } catch (error) {
      const logs = cluster.logTails();
      await cluster.stop();
      throw new Error(`${(error as Error).message}\n${logs}`);
    }
    return cluster;
  }

  /** Through HAProxy: whichever node leads now. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.proxyPort}/${database}`;
  }

  /** `/cluster` from any node's REST API that answers. */
  async members(): Promise<Member[]> {
    for (const node of this.nodes) {
      if (node.process === undefined) continue;
      const body = await getJson(`http://127.0.0.1:${node.restPort}/cluster`).catch(() => undefined);
      if (body !== undefined) return (body as { members: Member[] }).members;
    }
    return [];
  }

  async leader(): Promise<PatroniNode | undefined> {
    const name = (await this.members()).find((m) => m.role === 'leader' && m.state === 'running')?.name;
    return this.nodes.find((node) => node.name === name);
  }

  /** Resolves once one node leads and the other is its synchronous standby, streaming. */
  async waitForSyncPair(timeoutMs = 120_000): Promise<void> {
    await waitFor('a leader and a streaming synchronous standby', async () => {
      const members = await this.members();
      return members.some((m) => m.role === 'leader' && m.state === 'running') && members.some((m) => m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state));
    }, timeoutMs, 200);
  }

  /**
   * The leader's machine dies: its Patroni and its PostgreSQL (postmaster and every backend) get
   * SIGKILL at once, so nothing is handed over or flushed. Returns the node killed.
   */
  async killLeader(): Promise<PatroniNode> {
    const leader = await this.leader();
    if (leader === undefined) throw new Error('no leader to kill');
    const postmaster = Number(readFileSync(path.join(leader.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const postgresGroup = processGroupOf(postmaster);
    leader.process!.kill('SIGKILL');
    process.kill(-leader.process!.pid!, 'SIGKILL');
    process.kill(-postgresGroup, 'SIGKILL');
    leader.process = undefined;
    return leader;
  }

  /** Starts a node's Patroni again (after `killLeader`): it rejoins as a standby, rewound if it must be. */
  restartNode(node: PatroniNode): void {
    this.startNode(node);
  }

  /** A planned switchover through the leader's REST API (as `patronictl switchover` does). */
  async switchover(): Promise<{ from: string; to: string }> {
    const members = await this.members();
    const from = members.find((m) => m.role === 'leader')?.name;
    const to = members.find((m) => m.role === 'sync_standby')?.name;
    if (from === undefined || to === undefined) throw new Error(`no leader and sync standby to switch: ${JSON.stringify(members)}`);
    const leader = this.nodes.find((node) => node.name === from)!;
    const response = await fetch(`http://127.0.0.1:${leader.restPort}/switchover`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ leader: from, candidate: to }),
    });
    if (response.status !== 200) throw new Error(`switchover refused: ${response.status} ${await response.text()}`);
    return { from, to };
  }

  /** What `synchronous_standby_names` and `synchronous_commit` are on the leader, as PostgreSQL reports them. */
  leaderSettingsSql(): string {
    return `SELECT current_setting('synchronous_standby_names') AS names, current_setting('synchronous_commit') AS commit, pg_is_in_recovery() AS recovery`;
  }

  logTails(): string {
    return [...this.logs].map(([name, log]) => `--- ${name} ---\n${log.slice(-2000)}`).join('\n');
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      if (node.process !== undefined) killGroup(node.process);
      const pidFile = path.join(node.dataDir, 'postmaster.pid');
      try {
        process.kill(-processGroupOf(Number(readFileSync(pidFile, 'utf8').split('\n')[0])), 'SIGKILL');
      } catch {
        // No postmaster running.
      }
      node.process = undefined;
    }
    for (const child of [this.haproxy, this.etcd]) if (child !== undefined) killGroup(child);
    await new Promise((resolve) => setTimeout(resolve, 200));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private startEtcd(): void {
    const { client, peer } = this.etcdPorts;
    this.etcd = this.spawnLogged('etcd', 'etcd', [
      '--name', 'etcd1', '--data-dir', path.join(this.dir, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${client}`, '--advertise-client-urls', `http://127.0.0.1:${client}`,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `etcd1=http://127.0.0.1:${peer}`,
    ], false);
  }

  private startNode(node: PatroniNode): void {
    node.process = this.spawnLogged(node.name, 'patroni', [node.configFile], true);
  }

  // HAProxy checks each node's REST API every 500 ms: two failures mark it down, one success up.
  // `on-marked-down shutdown-sessions` cuts the connections to a node that stops being primary, so a
  // client never keeps writing to a demoted node (whose sessions would be read-only).
  private startHaproxy(): void {
    const servers = this.nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n');
    const config = `global
  maxconn 400
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen primary
  bind 127.0.0.1:${this.proxyPort}
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${servers}
`;
    const file = path.join(this.dir, 'haproxy.cfg');
    writeFileSync(file, config);
    this.haproxy = this.spawnLogged('haproxy', 'haproxy', ['-db', '-f', file], false);
  }

  private writeConfig(node: PatroniNode): void {
    const settings = {
      scope: SCOPE,
      name: node.name,
      restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
      etcd3: { hosts: `127.0.0.1:${this.etcdPorts.client}` },
      bootstrap: {
        dcs: {
          ttl: 10, loop_wait: 1, retry_timeout: 4, maximum_lag_on_failover: 0,
          // Only the synchronous standby may be promoted, and only once the leader key expired.
          synchronous_mode: true,
          postgresql: { use_pg_rewind: true, parameters: { synchronous_commit: 'on', wal_log_hints: 'on', max_wal_senders: 5, max_replication_slots: 5 } },
        },
        initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
        pg_hba: ['host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust', 'local all all trust'],
      },
      postgresql: {
        listen: `127.0.0.1:${node.pgPort}`, connect_address: `127.0.0.1:${node.pgPort}`,
        data_dir: node.dataDir, bin_dir: PostgresCluster.binaries(), pgpass: path.join(this.dir, `${node.name}.pgpass`),
        authentication: { superuser: { username: 'postgres' }, replication: { username: 'postgres' }, rewind: { username: 'postgres' } },
        parameters: { unix_socket_directories: this.dir, max_connections: 100 },
      },
    };
    // YAML is a superset of JSON: Patroni reads this as is.
    writeFileSync(node.configFile, JSON.stringify(settings, null, 2));
    giveToPostgres(node.configFile);
    mkdirSync(path.dirname(node.dataDir), { recursive: true });
  }

  // Each child leads a process group of its own, so that a kill reaches `runuser` and what it runs.
  private spawnLogged(name: string, command: string, args: readonly string[], runAsPostgres: boolean): ChildProcess {
    const [file, argv] = runAsPostgres ? asPostgres(command, args) : [command, [...args]];
    const child = spawn(file, argv, { cwd: this.dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.logs.set(name, this.logs.get(name) ?? '');
    const append = (chunk: Buffer) => this.logs.set(name, (this.logs.get(name)! + chunk.toString()).slice(-20_000));
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    child.on('error', (error) => append(Buffer.from(`spawn failed: ${error.message}\n`)));
    return child;
  }
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
  return response.json();
}

/** The fifth field of /proc/PID/stat (after the parenthesised command, which may hold spaces). */
function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

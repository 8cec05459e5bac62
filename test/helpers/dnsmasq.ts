/**
 * A real DNS server on loopback for the custom-domain tests: Debian's
 * dnsmasq on a free port, answering only the TXT records it is given
 * (no upstream, no hosts file). Tests skip, saying so, where it is missing;
 * on CI (`CI=true`) they fail instead, since .ci/run installs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promises as dns } from 'node:dns';
import path from 'node:path';
import { tempDir } from './config.js';
import { freePort } from './free-port.js';
import { requireDebianTool } from './debian-tool.js';

export const DNSMASQ_BIN = process.env.DNSMASQ_BIN ?? '/usr/sbin/dnsmasq';
const PROBE = '_probe.svc-test.invalid';

/** Skips the calling test (or suite) when dnsmasq is missing, except on CI. */
export function requireDnsmasq(context: Mocha.Context): void {
  requireDebianTool(context, { package: 'dnsmasq', bin: DNSMASQ_BIN, variable: 'DNSMASQ_BIN' });
}

export interface Dnsmasq {
  /** `127.0.0.1:<port>`, for `dnsResolver`. */
  readonly address: string;
  /** Serves exactly these TXT records (and A records, name → IPv4) from now on (dnsmasq restarted on the same port). */
  publish(records: Readonly<Record<string, string>>, addresses?: Readonly<Record<string, string>>): Promise<void>;
  stop(): Promise<void>;
}

export async function startDnsmasq(records: Readonly<Record<string, string>> = {}): Promise<Dnsmasq> {
  const port = await freePort({ udp: true });
  const dir = tempDir('svc-dns-');
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | null = null;

  async function stop(): Promise<void> {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  }

  async function publish(next: Readonly<Record<string, string>>, addresses: Readonly<Record<string, string>> = {}): Promise<void> {
    await stop();
    const conf = path.join(dir, 'dnsmasq.conf');
    const lines = [
      ...Object.entries({ ...next, [PROBE]: 'ready' }).map(([name, value]) => `txt-record=${name},"${value}"`),
      ...Object.entries(addresses).map(([name, ip]) => `address=/${name}/${ip}`),
    ];
    // Authoritative for the test names: an unknown one gets NXDOMAIN, as from a real zone, not REFUSED.
    writeFileSync(conf, `local=/test/\nlocal=/invalid/\n${lines.join('\n')}\n`);
    child = spawn(
      DNSMASQ_BIN,
      [
        '--keep-in-foreground',
        '--no-resolv',
        '--no-hosts',
        `--conf-file=${conf}`,
        `--port=${port}`,
        '--listen-address=127.0.0.1',
        '--bind-interfaces',
        `--pid-file=${path.join(dir, 'pid')}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = child;
    await waitUntilAnswering(address, () => (started.exitCode !== null ? `dnsmasq exited (${started.exitCode}): ${stderr}` : null));
  }

  await publish(records);
  return { address, publish, stop };
}

async function waitUntilAnswering(address: string, failed: () => string | null): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const problem = failed();
    if (problem !== null) throw new Error(problem);
    const resolver = new dns.Resolver({ timeout: 200, tries: 1 });
    resolver.setServers([address]);
    try {
      await resolver.resolveTxt(PROBE);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`dnsmasq did not answer at ${address}: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

import { loadConfig } from '../../config/load.js';
import { API_PREFIX } from '../../core/http/api/types.js';
import { isSvcError } from '../../core/model/errors.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { createOutput, printError, type Output } from '../output.js';
import { shellQuote } from '../shell-quote.js';
import { onStopSignal } from '../stop-signal.js';

export interface ServerFlags {
  readonly port?: string | number;
  readonly host?: string;
  readonly 'data-dir'?: string;
  readonly 'base-domain'?: string;
  readonly config?: string;
}

/**
 * `svc server`: the control plane, the gateway and the autoscaler in this
 * process, with durable state in `<data dir>/state`, until SIGTERM or
 * Ctrl-C, which drain requests in flight, stop every container, close the
 * state store and exit 0 — also while it still starts (restoring the
 * deployed apps can take minutes of image builds): the start stops at its
 * next step and undoes what it did. A second signal exits at once.
 * A second server on the same data dir stops at once with `state_locked`.
 * A replica (`state: consul`) that loses the leadership exits 1 for its
 * supervisor to start again as a standby; one that lost it because Consul
 * stopped answering serves the routes it knew and starts its platform again,
 * in this process, as a follower once Consul answers.
 */
export default async function server(flags: ServerFlags): Promise<void> {
  const out = createOutput();
  const stopStart = new AbortController();
  // The platform once started; undefined while it starts and after a start that failed or was stopped.
  let started: Promise<Platform | undefined> = Promise.resolve(undefined);
  let stopped = false;
  const stop = onStopSignal(async () => {
    out.step('stopping: draining requests in flight and stopping containers…');
    stopStart.abort();
    // A start cut short cleans up after itself (containers stopped, store closed) before it settles.
    const platform = await started;
    await platform?.close();
    stopped = true;
    out.done('stopped');
  });
  try {
    const config = loadConfig({
      flags: { port: flags.port, host: flags.host, dataDir: flags['data-dir'], baseDomain: flags['base-domain'] },
      file: flags.config,
    });
    for (let again = false; ; again = true) {
      let leadershipLost: (loss: Loss) => void = () => {};
      const lost = new Promise<Loss>((resolve) => (leadershipLost = resolve));
      const starting = startPlatform({
        config,
        logs: (line) => out.log(line.unit.split('/').slice(1).join('/') || line.unit, line.text, line.stream === 'system'),
        signal: stopStart.signal,
        onLeadershipLost: (reason, cutOff) => leadershipLost({ reason, cutOff }),
      });
      started = starting.catch(() => undefined);
      const platform = await starting;
      if (again) out.done(`started again as a follower on ${platform.url}`);
      else {
        for (const warning of [...platform.controlPlane.warnings, ...platform.ownerToken.warnings]) out.warn(warning);
        if (platform.ownerToken.created) out.done(`created the owner token in ${platform.ownerToken.path}`);
        printStarted(out, platform);
        if (platform.leader !== null)
          out.step(
            `one of the replicas sharing Consul KV at ${config.consulAddr}: it serves while it leads (/_svc/ready), else answers 503 not_leader`,
          );
        out.step('press Ctrl-C (or send SIGTERM) to stop');
      }
      const loss = await Promise.race([stop.wait.then(() => null), lost]);
      if (loss === null) break;
      if (!loss.cutOff) {
        // Crash-only: a fresh start comes back as a standby; the workloads stay with the new leader.
        out.warn(`this replica lost the leadership (${loss.reason}); exiting so that it starts again as a standby`);
        await platform.close({ keepWorkloads: true });
        process.exitCode = 1;
        stopped = true;
        break;
      }
      // Nothing else may lead while Consul is away: the workload URLs this replica knew keep being served.
      out.warn(
        `this replica lost the leadership (${loss.reason}); it serves the workload URLs it knew until Consul answers, then starts again as a follower`,
      );
      if (!(await Promise.race([stop.wait.then(() => false), consulAnswers(platform)]))) break;
      out.step('Consul answers again: starting again as a follower');
      await platform.close({ keepWorkloads: true });
    }
  } catch (error) {
    if (stopStart.signal.aborted && isSvcError(error) && error.code === 'shutting_down') await stop.wait;
    else {
      process.exitCode = printError(error);
      await (await started)?.close();
    }
  } finally {
    stop.dispose();
  }
  // Work the stop no longer waited for (an image build: pip can take minutes) would keep Node alive; it ends with svc.
  if (stopped) process.exit(process.exitCode ?? 0);
}

interface Loss {
  readonly reason: string;
  /** Consul stopped answering (the replica is stranded, not replaced). */
  readonly cutOff: boolean;
}

/** Resolves (true) once the platform's Consul watch sees Consul answer. */
function consulAnswers(platform: Platform): Promise<true> {
  const watch = platform.agents.consul;
  if (watch === null || watch.outage() === null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const unsubscribe = watch.onRecovered(() => {
      unsubscribe();
      resolve(true);
    });
  });
}

function printStarted(out: Output, platform: Platform): void {
  const { bold, dim } = out.color;
  const token = `$(cat ${shellQuote(platform.ownerToken.path)})`;
  out.result(bold(`svc server is listening on ${platform.url}`));
  if (platform.plainHttp)
    out.result(`  plain HTTP:   ${platform.plainHttp.url}${platform.plainHttp.redirects ? `  ${dim('(answers 308 to HTTPS)')}` : ''}`);
  out.result(`  data:         ${platform.config.dataDir}`);
  out.result(`  API:          ${platform.url}${API_PREFIX}  ${dim('(docs/api.md)')}`);
  out.result(
    `  metrics:      ${platform.metricsUrl ?? `${platform.url}/metrics`}  ${dim(platform.metricsUrl === null ? "(the operator's token; docs/metrics.md)" : '(no token; docs/metrics.md)')}`,
  );
  out.result(`  owner token:  ${platform.ownerToken.path}`);
  out.result(`  try:          curl -H "Authorization: Bearer ${token}" ${platform.url}${API_PREFIX}/whoami`);
  if (platform.signInLink) {
    out.result(`  sign in:      ${platform.signInLink.url}`);
    out.result(`                ${dim(`shown once: this link works once and expires in 15 minutes (${platform.signInLink.expiresAt})`)}`);
  }
  out.result();
}

/**
 * Maps of remote runs (docs/api.md "Maps"; `.map()`, `.starmap()` and
 * `.for_each()` in Python): one function of a run called once per input,
 * inputs sent in batches and outputs read as one stream, both with
 * backpressure (fan-out.ts). Maps live in memory only, like their runs: an
 * ended map is kept `retainMs` for its view, then forgotten; every map of a
 * run is cancelled when the run ends. Every route works in the caller's
 * workspace: another workspace's map is as unknown as one that never was.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';
import type { RunManager } from '../runs/runs.js';
import type { MapBacklog, WorkLabels, WorkMetrics } from '../../infra/metrics/work-metrics.js';
import { FanOut } from './fan-out.js';
import type { MapView } from './types.js';

/** Maps one workspace may have running at once: each holds its window of inputs in svc's memory. */
export const MAX_RUNNING_MAPS = 64;
/** How long a map runs with nobody reading its outputs before it is cancelled (its caller died). */
export const UNREAD_MS = 30_000;
/** How long an ended map's view stays readable. */
export const RETAIN_MS = 10 * 60_000;

export interface MapManagerOptions {
  readonly runs: Pick<RunManager, 'attach' | 'call'> & Partial<Pick<RunManager, 'runWaitReason'>>;
  /** Counts answered inputs (`/metrics`). */
  readonly meter?: Pick<WorkMetrics, 'mapInput'>;
  readonly unreadMs?: number;
  readonly retainMs?: number;
}

export class MapManager {
  readonly #options: MapManagerOptions;
  readonly #maps = new Map<string, FanOut>();
  readonly #forget = new Set<NodeJS.Timeout>();
  readonly #labels = new Map<string, WorkLabels>();

  constructor(options: MapManagerOptions) {
    this.#options = options;
  }

  /** A new map of the run's function, with no input yet; `too_many_maps` past MAX_RUNNING_MAPS. */
  create(workspace: string, runId: string): MapView {
    const running = [...this.#maps.values()].filter((map) => map.workspace === workspace && map.status === 'running').length;
    if (running >= MAX_RUNNING_MAPS) {
      throw new SvcError('too_many_maps', `the workspace ${workspace} already has ${running} maps running, the most it may run at once.`, {
        hint: 'Let a map finish, or cancel those you no longer read (DELETE /api/v1/maps/<id>).',
      });
    }
    const { runs } = this.#options;
    const id = `map-${randomBytes(8).toString('hex')}`;
    let map: FanOut | undefined;
    const attachment = runs.attach(workspace, runId, () => map?.status === 'running');
    const labels: WorkLabels = { workspace, app: attachment.app, function: attachment.workload.name };
    const { meter } = this.#options;
    map = new FanOut({
      id,
      workspace,
      run: runId,
      attachment,
      call: (body, signal, requestId, options) => runs.call(workspace, runId, body, signal, requestId, options),
      unreadMs: this.#options.unreadMs ?? UNREAD_MS,
      onEnd: () => this.#retain(id),
      ...(meter ? { onAnswer: (outcome: 'succeeded' | 'failed') => meter.mapInput(labels, outcome) } : {}),
    });
    this.#labels.set(id, labels);
    this.#maps.set(id, map);
    return map.view();
  }

  get(workspace: string, id: string): MapView {
    return this.#view(this.#require(workspace, id));
  }

  /** The maps of one app in the workspace, running and ended within `retainMs`, newest first (the dashboard's Calls page). */
  ofApp(workspace: string, app: string): MapView[] {
    const views = [...this.#maps]
      .filter(([id, map]) => map.workspace === workspace && this.#labels.get(id)?.app === app)
      .map(([, map]) => this.#view(map));
    return views.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
  }

  /** Takes a batch of inputs (an NDJSON body); answers once they are all in the map's window. */
  async inputs(workspace: string, id: string, body: Buffer, last: boolean): Promise<MapView> {
    const map = this.#require(workspace, id);
    await map.take(body, last);
    return this.#view(map);
  }

  /** The map's outputs as NDJSON, streamed as they happen; `conflict` while another client reads them. */
  outputs(workspace: string, id: string): Readable {
    return this.#require(workspace, id).reader();
  }

  /** Cancels the inputs not started yet; those running finish and their outputs still stream. */
  cancel(workspace: string, id: string): void {
    this.#require(workspace, id).cancel('deleted');
  }

  /** Each running map's inputs queued and running now, for the backlog gauges. */
  *backlog(): Iterable<MapBacklog> {
    for (const [id, map] of this.#maps) {
      if (map.status !== 'running') continue;
      const { inputs } = map.view();
      yield { labels: this.#labels.get(id)!, queued: inputs.queued, running: inputs.running };
    }
  }

  /** svc is stopping: no timer is left (the runs' end cancelled the maps). */
  close(): void {
    for (const timer of this.#forget) clearTimeout(timer);
    this.#forget.clear();
    for (const map of this.#maps.values()) map.close();
  }

  /** The map's view; while inputs are queued and its run's containers wait for a GPU, it says why (`waiting`). */
  #view(map: FanOut): MapView {
    const view = map.view();
    if (view.status !== 'running' || view.inputs.queued === 0) return view;
    const waiting = this.#options.runs.runWaitReason?.(map.workspace, view.run) ?? null;
    return waiting === null ? view : { ...view, waiting };
  }

  #retain(id: string): void {
    const timer = setTimeout(() => {
      this.#forget.delete(timer);
      this.#maps.get(id)?.close();
      this.#maps.delete(id);
      this.#labels.delete(id);
    }, this.#options.retainMs ?? RETAIN_MS);
    timer.unref();
    this.#forget.add(timer);
  }

  #require(workspace: string, id: string): FanOut {
    const map = this.#maps.get(id);
    // Another workspace's map is as unknown as one that never was: the same words.
    if (map === undefined || map.workspace !== workspace) {
      throw new SvcError('not_found', `there is no map ${id}: it ended more than ${RETAIN_MS / 60_000} minutes ago, or never existed.`, {
        hint: 'Create one with POST /api/v1/runs/<id>/maps.',
      });
    }
    return map;
  }
}

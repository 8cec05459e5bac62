/**
 * The volumes of each workspace: a record in the state store (`volumes/<workspace>/<name>`) and its
 * files where the storage keeps them (a folder under the server's data dir,
 * `<dataDir>/volumes/<workspace>/<name>/`, or a CSI volume on Nomad: core/infra/volumes). Another
 * workspace's volume is unknown here, in the same words as one that never was. Uploads are bounded
 * by the operator's limits per volume and per workspace (`volume_full`, with the figures).
 */
import type { Readable } from 'node:stream';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { SvcError } from '../../model/errors.js';
import { checkName } from '../../model/names.js';
import type { Principal } from '../../model/principal.js';
import { storedJson, storedObject, storedString, storedStringOrNull } from '../../model/store/stored-fields.js';
import { getJson, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { volumePathParts } from '../../model/volume-paths.js';
import { formatBytes } from '../../model/format-bytes.js';
import { fileErrors, MAX_LIST_ENTRIES } from '../../infra/volumes/file-errors.js';
import type { EntriesListing, OpenedFile, PickBytes, VolumePlace, VolumeStorage } from '../../infra/volumes/types.js';
import type { ListPage, VolumeEntry, VolumeLimits, VolumeMounting, VolumeRecord, VolumeView } from './types.js';

const PREFIX = 'volumes/';
/** How long a walk of every volume's files serves `/metrics` before the next one. */
const USAGE_TTL_MS = 30_000;
/**
 * How long a listing or a `/metrics` walk waits for one volume's size: a CSI volume's keeper may take
 * minutes to start, or never (a plugin down), and one such volume must not hold up the others.
 */
const SIZE_WAIT_MS = 5_000;
/**
 * How old the sizes that admit an upload may be (this server's own uploads since counted in): files that
 * containers wrote meanwhile are counted from the next measure, so a workspace may pass its limit by what
 * its containers wrote in this time. Without it, every upload walked every file of the workspace's volumes.
 */
const ROOM_SIZES_AGE_MS = 30_000;

export function volumeKey(workspace: string, name: string): string {
  return `${PREFIX}${workspace}/${name}`;
}

function validRecord(value: unknown, key: string): VolumeRecord {
  const record = storedObject(value, key);
  return {
    name: storedString(record, 'name', key),
    workspace: storedString(record, 'workspace', key),
    createdAt: storedString(record, 'createdAt', key),
    createdBy: storedStringOrNull(record, 'createdBy', key),
  };
}

export function volumeNotFound(workspace: string, name: string): SvcError {
  return new SvcError('not_found', `the workspace ${workspace} has no volume ${name}.`, {
    hint: `svc volume list shows its volumes; svc volume create ${name} makes one.`,
  });
}

function alreadyThere(workspace: string, name: string): SvcError {
  return new SvcError('conflict', `the workspace ${workspace} already has a volume ${name}.`, {
    hint: `Use it as it is (svc volume ls ${name}), or delete it first: svc volume delete ${name}.`,
  });
}

export interface VolumesOptions {
  readonly store: StateStore;
  /** Where the files are: a folder per volume on this disk, or CSI volumes on Nomad. */
  readonly storage: VolumeStorage;
  readonly limits: VolumeLimits;
  readonly clock?: Clock;
}

export class Volumes implements VolumeMounting {
  readonly #store: StateStore;
  readonly #storage: VolumeStorage;
  readonly #limits: VolumeLimits;
  readonly #clock: Clock;
  #usage: { readonly at: number; readonly walked: Promise<{ workspace: string; volume: string; bytes: number }[]> } | null = null;
  /** The declared bytes of the uploads under way, by `<workspace>/<volume>`: room already promised. */
  readonly #underWay = new Map<string, number>();

  constructor(options: VolumesOptions) {
    this.#store = options.store;
    this.#storage = options.storage;
    this.#limits = options.limits;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * A new, empty volume; `conflict` when the workspace has one of that name (its files untouched). A place
   * the storage could not make ready (a CSI volume whose keeper did not start) is removed by the storage.
   */
  async create(workspace: string, name: string, principal: Principal | null): Promise<VolumeView> {
    checkName('volume', name);
    const record: VolumeRecord = { name, workspace, createdAt: isoAt(this.#clock()), createdBy: principal?.tokenId ?? null };
    if ((await getJson(this.#store, volumeKey(workspace, name), validRecord)) !== null) throw alreadyThere(workspace, name);
    await this.#storage.create(workspace, name);
    if (!(await putJson(this.#store, volumeKey(workspace, name), record, { cas: 0 }))) throw alreadyThere(workspace, name);
    return this.#view(record);
  }

  async list(workspace: string): Promise<VolumeView[]> {
    return Promise.all((await this.#records(workspace)).map((record) => this.#view(record)));
  }

  async get(workspace: string, name: string): Promise<VolumeView> {
    return this.#view(await this.#require(workspace, name));
  }

  /** Removes the volume and every file in it. */
  async delete(workspace: string, name: string): Promise<void> {
    await this.#require(workspace, name);
    // The files first, the record once they are gone: a delete that fails (a CSI volume Nomad still has
    // claims on) leaves the volume as it was, to be deleted again, never a place no record leads to.
    await this.#storage.delete(workspace, name);
    await this.#store.delete(volumeKey(workspace, name));
  }

  async check(workspace: string, names: readonly string[]): Promise<void> {
    const missing: string[] = [];
    for (const name of new Set(names))
      if ((await getJson(this.#store, volumeKey(workspace, name), validRecord)) === null) missing.push(name);
    if (missing.length === 0) return;
    const listed = missing.map((name) => JSON.stringify(name)).join(', ');
    throw new SvcError('volume_not_found', `the workspace ${workspace} has no volume ${listed}.`, {
      hint: `Create it first: svc volume create ${missing[0]} (or svc.Volume.from_name(${JSON.stringify(missing[0])}, create_if_missing=True) before the deploy).`,
      details: { volumes: missing },
    });
  }

  mountSource(workspace: string, name: string): string {
    return this.#storage.mountSource(workspace, name);
  }

  /**
   * What `at` names, a page at a time (`page`: after which entry, how many at most), or, without a page,
   * all of it when it is at most MAX_LIST_ENTRIES entries (past that, `bad_request` saying to page): a caller
   * that does not know pages never takes the first page for all of it.
   */
  async ls(workspace: string, name: string, at: string, recursive: boolean, page: ListPage | null = null): Promise<EntriesListing> {
    const place = await this.#place(workspace, name, at);
    if (page === null) {
      const listing = await this.#storage.list(place, recursive, { after: null, limit: MAX_LIST_ENTRIES });
      if (listing.next !== null) throw fileErrors.tooMany(place.parts.join('/'));
      return listing;
    }
    const after = page.after === null ? null : volumePathParts(page.after, 'after');
    if (after !== null && !(after.length > place.parts.length && place.parts.every((part, i) => after[i] === part))) {
      throw new SvcError('bad_request', `after=${JSON.stringify(page.after)} is not below path=${JSON.stringify(at)}.`, {
        hint: 'Pass the "next" of the page before, unchanged, with the same path.',
        details: { field: 'after' },
      });
    }
    return this.#storage.list(place, recursive, { after, limit: page.limit });
  }

  /** Stores `body` at `at`, replacing a file there once all of it arrived; `volume_full` past the limits. */
  async put(workspace: string, name: string, at: string, body: Readable, declaredBytes: number | null): Promise<VolumeEntry> {
    const place = await this.#place(workspace, name, at);
    // Sizes up to ROOM_SIZES_AGE_MS old admit an upload that fits in them; one that seems not to fit is
    // measured again before it is refused. A body of unknown length is measured against sizes of now.
    let room = await this.#room(workspace, name, declaredBytes === null ? 0 : ROOM_SIZES_AGE_MS);
    if (declaredBytes !== null && declaredBytes > room.left()) room = await this.#room(workspace, name, 0);
    // Checked and promised with no wait between: uploads at once (a folder's files) share the room. What is
    // promised is held until the upload ends, when its bytes are in the sizes kept.
    if (declaredBytes !== null && declaredBytes > room.left()) throw room.full(declaredBytes);
    const writable = Math.max(0, room.left());
    const key = `${workspace}/${name}`;
    const promised = declaredBytes ?? 0;
    this.#underWay.set(key, (this.#underWay.get(key) ?? 0) + promised);
    try {
      return await this.#storage.write(place, body, writable, room.full);
    } finally {
      const left = (this.#underWay.get(key) ?? 0) - promised;
      if (left > 0) this.#underWay.set(key, left);
      else this.#underWay.delete(key);
    }
  }

  /**
   * The volume's and the workspace's bytes, from sizes up to `maxAgeMs` old; `left()` is the room an
   * upload has beside them and the uploads under way as of the call; `full` says why one does not fit.
   */
  async #room(workspace: string, name: string, maxAgeMs: number): Promise<{ left: () => number; full: (adding: number) => SvcError }> {
    const others = (await this.#records(workspace)).filter((record) => record.name !== name);
    // This volume's bytes must be known; another's that cannot be read (its keeper not placed, and no size
    // read before) counts as full, so that the workspace's limit still holds without one volume's keeper
    // stopping every upload.
    const sizeOf = (volume: string) => this.#storage.usedBytes(workspace, [volume], maxAgeMs).then((byVolume) => byVolume.get(volume) ?? 0);
    const [measured, sizes] = await Promise.all([
      sizeOf(name),
      Promise.all(others.map(async (record) => ({ name: record.name, bytes: await sizeOf(record.name).catch(() => null) }))),
    ]);
    const unknown = sizes.filter((size) => size.bytes === null).map((size) => size.name);
    const measuredWorkspace = sizes.reduce((sum, size) => sum + (size.bytes ?? this.#limits.volumeMaxBytes), measured);
    // What uploads under way were promised counts as held: their bytes are not in the sizes yet.
    const held = () => {
      let workspaceUnderWay = 0;
      for (const [key, bytes] of this.#underWay) if (key.startsWith(`${workspace}/`)) workspaceUnderWay += bytes;
      return { used: measured + (this.#underWay.get(`${workspace}/${name}`) ?? 0), workspaceUsed: measuredWorkspace + workspaceUnderWay };
    };
    return {
      left: () => {
        const { used, workspaceUsed } = held();
        return Math.min(this.#limits.volumeMaxBytes - used, this.#limits.workspaceMaxBytes - workspaceUsed);
      },
      full: (adding) => {
        const { used, workspaceUsed } = held();
        return this.#full(workspace, name, used, workspaceUsed, adding, unknown);
      },
    };
  }

  /** The file at `at`, to stream: the bytes `pick` chooses from its size and entity tag (all by default). */
  async open(workspace: string, name: string, at: string, pick?: PickBytes): Promise<OpenedFile> {
    return this.#storage.open(await this.#place(workspace, name, at), pick);
  }

  async remove(workspace: string, name: string, at: string, recursive: boolean): Promise<void> {
    await this.#storage.remove(await this.#place(workspace, name, at), recursive);
  }

  /** The bytes each volume of every workspace holds: walked at most every USAGE_TTL_MS, else as last walked. */
  usage(): Promise<{ workspace: string; volume: string; bytes: number }[]> {
    const now = this.#clock();
    if (this.#usage === null || now - this.#usage.at >= USAGE_TTL_MS) {
      const walked = this.#walkUsage();
      this.#usage = { at: now, walked };
      walked.catch(() => (this.#usage = null)); // a failed walk is not kept: the next scrape walks again
    }
    return this.#usage.walked;
  }

  async #walkUsage(): Promise<{ workspace: string; volume: string; bytes: number }[]> {
    const records = (await this.#store.list(PREFIX)).map((entry) => storedJson(entry, validRecord));
    // A volume whose size cannot be read now (its keeper restarting) is left out of this walk, not every volume with it.
    const walked = await Promise.all(records.map(async (r) => ({ workspace: r.workspace, volume: r.name, ...(await this.#bytes(r)) })));
    return walked.flatMap(({ workspace, volume, bytes }) => (bytes === null ? [] : [{ workspace, volume, bytes }]));
  }

  async #records(workspace: string): Promise<VolumeRecord[]> {
    const entries = await this.#store.list(`${PREFIX}${workspace}/`);
    return entries.map((entry) => storedJson(entry, validRecord)).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The volume's size, or why it cannot be read within SIZE_WAIT_MS (the read goes on; a CSI volume's size it brings is kept for the next call). */
  async #bytes(record: VolumeRecord): Promise<{ bytes: number; bytesError?: never } | { bytes: null; bytesError: string }> {
    const reading = this.#storage.usedBytes(record.workspace, [record.name]).then((sizes) => sizes.get(record.name) ?? 0);
    let waited: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      waited = setTimeout(() => resolve(null), SIZE_WAIT_MS);
    });
    try {
      const bytes = await Promise.race([reading, late]);
      if (bytes !== null) return { bytes };
      reading.catch(() => {}); // still read, later: a failure then is nobody's to report
      return {
        bytes: null,
        bytesError: `its size was not read within ${SIZE_WAIT_MS / 1000} s (a CSI volume's keeper starting, a large folder being walked); ask again in a moment.`,
      };
    } catch (error) {
      return { bytes: null, bytesError: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(waited);
    }
  }

  /** Where `at` is in the volume, once the volume is known to be the workspace's. */
  async #place(workspace: string, name: string, at: string): Promise<VolumePlace> {
    await this.#require(workspace, name);
    return { workspace, volume: name, parts: volumePathParts(at) };
  }

  async #require(workspace: string, name: string): Promise<VolumeRecord> {
    checkName('volume', name);
    const entry = await getJson(this.#store, volumeKey(workspace, name), validRecord);
    if (entry === null) throw volumeNotFound(workspace, name);
    return entry.value;
  }

  async #view(record: VolumeRecord): Promise<VolumeView> {
    return {
      name: record.name,
      createdAt: record.createdAt,
      ...(await this.#bytes(record)),
      maxBytes: this.#limits.volumeMaxBytes,
    };
  }

  #full(workspace: string, name: string, used: number, workspaceUsed: number, adding: number, unknown: readonly string[]): SvcError {
    const { volumeMaxBytes, workspaceMaxBytes } = this.#limits;
    const overVolume = used + adding > volumeMaxBytes;
    const counted =
      unknown.length === 0 ? '' : ` (counting ${unknown.join(', ')} at ${formatBytes(volumeMaxBytes)} each: their size cannot be read now)`;
    const message = overVolume
      ? `the volume ${name} holds ${formatBytes(used)} of at most ${formatBytes(volumeMaxBytes)}; ${formatBytes(adding)} more do not fit.`
      : `the volumes of ${workspace} hold ${formatBytes(workspaceUsed)} of at most ${formatBytes(workspaceMaxBytes)} together${counted}; ${formatBytes(adding)} more do not fit.`;
    return new SvcError('volume_full', message, {
      hint: 'Remove files you no longer need (svc volume rm), or ask the operator for more room (volumeMaxBytes, workspaceVolumeBytes).',
      details: {
        usedBytes: overVolume ? used : workspaceUsed,
        maxBytes: overVolume ? volumeMaxBytes : workspaceMaxBytes,
        addingBytes: adding,
      },
    });
  }
}

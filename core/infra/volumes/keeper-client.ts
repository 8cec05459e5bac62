/**
 * A volume's files through its keeper: the small process that mounts a volume svc cannot reach from
 * its own disk (a CSI volume on Nomad) and serves its files over HTTP
 * (`python -m svc.runtime volume-keeper`, sdk/python/svc/runtime/_volume_keeper.py). The keeper does
 * the file work where the files are (where each path leads, atomic uploads); svc keeps everything
 * else (who may, limits, the API). Its answers' problems become the same errors as the folder's.
 *
 * Requests are signed with the keeper's token (HMAC-SHA256 of the method, path and query, a time and a
 * nonce), never sent with the token itself: the address a keeper had may answer for another process
 * once its allocation is gone, and that process learns nothing it could use.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';
import { SvcError } from '../../model/errors.js';
import { fileErrors } from './file-errors.js';
import type { EntriesListing, EntriesPage, OpenedFile, PickBytes, VolumeEntry, VolumePlace } from './types.js';

/** Where a running keeper answers, and the token it asks for. */
export interface KeeperAddress {
  readonly url: string;
  readonly token: string;
}

export interface KeeperFinder {
  /** The volume's keeper, started (and waited for) when it does not run. */
  find(workspace: string, volume: string): Promise<KeeperAddress>;
  /** A keeper that did not answer at its address: found again next time. */
  forget(workspace: string, volume: string): void;
}

type Answer = Dispatcher.ResponseData;
interface Problem {
  readonly problem?: string;
  readonly written?: number;
  readonly message?: string;
}

/** Bound on the head of an answer to a quick read (a listing, a file's size, a download's start): a keeper that takes longer is treated as gone. */
const HEAD_TIMEOUT_MS = 60_000;

export class KeeperFiles {
  readonly #finder: KeeperFinder;

  constructor(finder: KeeperFinder) {
    this.#finder = finder;
  }

  async list(at: VolumePlace, recursive: boolean, page: EntriesPage): Promise<EntriesListing> {
    const query = {
      path: shown(at),
      recursive: recursive ? '1' : '0',
      limit: String(page.limit),
      ...(page.after === null ? {} : { after: page.after.join('/') }),
    };
    return (await this.#json(at, await this.#send(at, 'GET', '/entries', query, { bounded: true }))) as EntriesListing;
  }

  /** Writes `body` at `at` (see VolumeStorage.write); with the new file's entry, the bytes of the file it replaced (0 for none). */
  async write(
    at: VolumePlace,
    body: Readable,
    room: number,
    full: (written: number) => SvcError,
  ): Promise<{ entry: VolumeEntry; replacedBytes: number }> {
    if (at.parts.length === 0) throw fileErrors.rootNotAFile();
    // Through a stream of its own, to tell the client's upload breaking off (the body fails) from the
    // keeper's connection failing (undici ends what it sends). Sent once: a body read cannot be sent again.
    let failed: Error | null = null;
    const sent = new PassThrough();
    body.once('error', (error) => {
      failed = error;
      sent.destroy(error);
    });
    body.pipe(sent);
    let answer: Answer;
    try {
      answer = await this.#send(at, 'PUT', '/file', { path: shown(at), room: String(room) }, { bounded: false, body: sent });
    } catch (error) {
      // The keeper removes what it had of an upload that broke off.
      if (failed !== null) throw isCutOff(failed) ? fileErrors.cutOff(shown(at), failed) : failed;
      stopSending(body, sent);
      throw error;
    }
    if (answer.statusCode === 200) return (await this.#json(at, answer)) as { entry: VolumeEntry; replacedBytes: number };
    // The keeper refused the upload part-way: its answer is read before what is sent to it stops (which
    // aborts the request); the rest of the client's body is the API's to drop (core/http/api/router.ts).
    const problem = (await answer.body.json().catch(() => ({}))) as Problem;
    stopSending(body, sent);
    if (answer.statusCode === 413) throw full(problem.written ?? room + 1);
    throw problemError(at, answer.statusCode, problem);
  }

  async open(at: VolumePlace, pick: PickBytes = () => null): Promise<OpenedFile> {
    const stat = (await this.#json(at, await this.#send(at, 'GET', '/stat', { path: shown(at) }, { bounded: true }))) as {
      size: number;
      etag: string;
    };
    const { start, end } = pick(stat) ?? { start: 0, end: stat.size - 1 };
    const query = { path: shown(at), start: String(start), end: String(end), etag: stat.etag };
    const answer = await this.#send(at, 'GET', '/file', query, { bounded: true }); // the head only: the body waits for a slow client
    if (answer.statusCode !== 200) await this.#json(at, answer); // throws its problem
    return { size: stat.size, etag: stat.etag, start, end, stream: answer.body };
  }

  async remove(at: VolumePlace, recursive: boolean): Promise<void> {
    if (at.parts.length === 0) throw fileErrors.rootNotRemovable(at.volume);
    // Sent once, and waited for: removing a large folder may take a while, and a second try would find less.
    const answer = await this.#send(at, 'DELETE', '/file', { path: shown(at), recursive: recursive ? '1' : '0' }, { bounded: false });
    if (answer.statusCode === 204) return void (await answer.body.dump());
    await this.#json(at, answer);
  }

  async usedBytes(workspace: string, volume: string): Promise<number> {
    const at = { workspace, volume, parts: [] };
    // Unbounded: walking a whole volume takes what it takes.
    return ((await this.#json(at, await this.#send(at, 'GET', '/usage', {}, { bounded: false }))) as { bytes: number }).bytes;
  }

  /**
   * One request to the volume's keeper. A read whose keeper does not answer at the address known, or
   * answers as no keeper of this volume would (refusing the signature, not knowing the route), is sent
   * once more to the keeper found again (it may have moved to another allocation); an upload or a
   * removal is never sent twice. A `bounded` request gets the head of its answer within HEAD_TIMEOUT_MS
   * or counts the keeper as gone (reads of a few entries); the others take what they take.
   */
  async #send(
    at: VolumePlace,
    method: string,
    route: string,
    query: Record<string, string>,
    { bounded, body }: { bounded: boolean; body?: Readable },
  ): Promise<Answer> {
    const target = `${route}?${new URLSearchParams(query).toString()}`;
    for (let attempt = 0; ; attempt++) {
      const keeper = await this.#finder.find(at.workspace, at.volume);
      let answer: Answer;
      try {
        answer = await request(`${keeper.url}${target}`, {
          method: method as Dispatcher.HttpMethod,
          headers: {
            authorization: signature(keeper.token, method, target),
            ...(body === undefined ? {} : { 'content-type': 'application/octet-stream' }),
          },
          body,
          headersTimeout: bounded ? HEAD_TIMEOUT_MS : 0,
          bodyTimeout: 0,
        });
      } catch (error) {
        this.#finder.forget(at.workspace, at.volume);
        if (attempt === 0 && method === 'GET') continue;
        throw unreachable(at.volume, keeper.url, error);
      }
      if (!notThisKeeper(answer)) return answer;
      this.#finder.forget(at.workspace, at.volume);
      await answer.body.dump();
      if (attempt > 0 || method !== 'GET') throw notThisKeepersAnswer(at.volume, keeper.url, answer.statusCode);
    }
  }

  /** The answer's JSON when it succeeded; else its problem, as the error the folder storage would throw. */
  async #json(at: VolumePlace, answer: Answer): Promise<unknown> {
    const value = (await answer.body.json().catch(() => null)) as Problem | null;
    if (answer.statusCode >= 200 && answer.statusCode < 300 && value !== null) return value;
    throw problemError(at, answer.statusCode, value ?? {});
  }
}

const shown = (at: VolumePlace) => at.parts.join('/');

/** Stops sending the client's body on: what it still sends is the API's to read and drop (core/http/api/router.ts). */
function stopSending(body: Readable, sent: PassThrough): void {
  body.unpipe(sent);
  sent.destroy();
}

/** `SvcKeeper <ms>.<nonce>.<mac>`: the request signed with the keeper's token (sdk/python/svc/runtime/_volume_keeper.py checks it). */
function signature(token: string, method: string, target: string): string {
  const at = Date.now();
  const nonce = randomBytes(12).toString('hex');
  const mac = createHmac('sha256', token).update(`${method}\n${target}\n${at}.${nonce}`).digest('hex');
  return `SvcKeeper ${at}.${nonce}.${mac}`;
}

/** An answer no keeper of this volume gives to a request of svc's: another process at the address, or a keeper with another token. */
function notThisKeeper(answer: Answer): boolean {
  if (answer.statusCode === 401) return true;
  const type = String(answer.headers['content-type'] ?? '');
  return answer.statusCode >= 400 && !type.startsWith('application/json');
}

/** The client went away mid-upload (as the folder storage tells it); any other failure of the body (a size limit) is itself. */
function isCutOff(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || error.message === 'aborted';
}

const KEEPER_JOB_SHOWN = 'Nomad shows it as the job svc--volume--<workspace>--<volume>.';

function unreachable(volume: string, url: string, cause: unknown): SvcError {
  const why = (cause as { code?: string }).code ?? (cause as Error).message;
  return new SvcError('upstream_unreachable', `the keeper of the volume ${volume} does not answer at ${url} (${why}).`, {
    hint: `Try again in a moment: svc starts another keeper when its allocation is gone. ${KEEPER_JOB_SHOWN}`,
    cause,
  });
}

/** What a request that reached something other than this volume's keeper (refused, sent once) is told. */
function notThisKeepersAnswer(volume: string, url: string, status: number): SvcError {
  return new SvcError(
    'upstream_unreachable',
    // A refused signature did nothing; another answer not in the keeper's JSON (a proxy's page) may come from anywhere.
    `what answers at ${url}, where the keeper of the volume ${volume} was, is not it (it answered ${status} to svc's signed request${status === 401 ? '); nothing was done.' : ').'}`,
    {
      hint: `Try again in a moment: the keeper is looked for again. ${KEEPER_JOB_SHOWN}`,
      details: { status },
    },
  );
}

function problemError(at: VolumePlace, status: number, answer: Problem): SvcError {
  const path = shown(at);
  const parent = at.parts.slice(0, -1).join('/');
  switch (answer.problem) {
    case 'not_found':
      return fileErrors.notFound(at.volume, path);
    case 'outside':
      return fileErrors.outside(path);
    case 'is_folder':
      return status === 409 ? fileErrors.folderInTheWay(at.volume, path) : fileErrors.folderNotFile(at.volume, path);
    case 'not_a_folder':
      return fileErrors.parentIsAFile(at.volume, parent);
    case 'needs_recursive':
      return fileErrors.needsRecursive(at.volume, path);
    case 'root':
      return fileErrors.rootNotAFile();
    case 'changed':
      return new SvcError('conflict', `${JSON.stringify(path)} in the volume ${at.volume} changed while it was being read.`, {
        hint: 'Get it again.',
      });
    case 'disk_full':
      return new SvcError(
        'disk_full',
        `the disk of the volume ${at.volume} is full: the upload of ${JSON.stringify(path)} was refused, nothing of it kept.`,
        {
          hint: "Remove files from the volume (svc volume rm), or ask the operator to grow the CSI volume's disk.",
        },
      );
    default:
      return new SvcError(
        'internal',
        `the keeper of the volume ${at.volume} answered ${status}: ${answer.message ?? answer.problem ?? 'no reason given'}.`,
        {
          details: { status, problem: answer.problem ?? null },
        },
      );
  }
}

/**
 * Why a wait of the Nomad driver failed, as the `container_failed` error it rejects with: the
 * reason, with the last log lines and Nomad task events of the allocation that failed.
 */
import { SvcError } from '../../../model/errors.js';
import type { NomadDriverState, Unit } from './driver-state.js';
import type { AllocView } from './watcher.js';

/** How many log lines a failure (and `allocationLogs` by default) shows. */
export const LOG_TAIL = 30;

/** The last `tail` lines of one stream of an allocation's task, read from Nomad's logs endpoint. */
export async function logTail(
  state: NomadDriverState,
  unit: Unit,
  allocId: string,
  stream: 'stdout' | 'stderr',
  tail: number,
): Promise<string[]> {
  const text = await state.client.text(`/v1/client/fs/logs/${encodeURIComponent(allocId)}`, {
    task: unit.task,
    type: stream,
    plain: true,
    origin: 'end',
    offset: 64 * 1024,
  });
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.slice(-tail);
}

/** The error for `reason`, told to the log sink too, with what the allocation (when known) last said. */
export async function failure(state: NomadDriverState, unit: Unit, view: AllocView | undefined, reason: string): Promise<SvcError> {
  const logs: string[] = [];
  if (view) {
    for (const stream of ['stdout', 'stderr'] as const) {
      try {
        logs.push(...(await logTail(state, unit, view.stub.ID, stream, LOG_TAIL)).map((line) => `[${stream}] ${line}`));
      } catch {
        // The allocation's logs may be gone (garbage-collected); the reason still stands.
      }
    }
    const events = Object.values(view.stub.TaskStates ?? {})
      .flatMap((s) => s.Events ?? [])
      .map((e) => e.DisplayMessage)
      .filter(Boolean);
    if (events.length) logs.push(...events.slice(-5).map((e) => `[nomad] ${e}`));
  }
  const container = view?.stub.ID ?? '';
  state.emit(unit.key, container, reason);
  return new SvcError('container_failed', `${reason}${logs.length ? `\nLast log lines:\n${logs.join('\n')}` : ''}`, {
    details: { unit: unit.key, container, job: unit.jobId, logs },
  });
}

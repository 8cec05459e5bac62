/**
 * A start (start-units.ts) that stops at its next step once its signal
 * aborts: it no longer waits for its image build (the build goes on for
 * others sharing it, or dies with svc) and submits or scales no unit, so
 * nothing starts after whoever owned the start gave up on it. The deployment
 * manager guards its starts with svc's stop; a remote run with its own end.
 */
import type { SvcError } from '../../model/errors.js';
import type { StartContext } from './start-units.js';

/** Told which units the start submitted and which were removed, to stop the ones left at shutdown. */
export interface StartTracking {
  submitted?(key: string): void;
  removed?(key: string): void;
}

/** `work`, or a rejection with `stopped()` as soon as `signal` aborts. */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal, stopped: () => SvcError): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function guardedStart(
  context: StartContext,
  signal: AbortSignal,
  stopped: () => SvcError,
  tracking: StartTracking = {},
): StartContext {
  const { images, driver } = context;
  return {
    images: { name: images.name, build: (spec, log) => unlessAborted(images.build(spec, log), signal, stopped) },
    driver: {
      name: driver.name,
      submit: async (unit) => {
        if (signal.aborted) throw stopped();
        tracking.submitted?.(unit.key);
        await driver.submit(unit);
      },
      scale: async (key, count) => {
        if (signal.aborted) throw stopped();
        await driver.scale(key, count);
      },
      stop: (key, id) => driver.stop(key, id),
      remove: (key) => {
        tracking.removed?.(key);
        return driver.remove(key);
      },
      status: (key) => driver.status(key),
      close: () => driver.close(),
      // A dry run: asked before a start, never refused.
      ...(driver.plan ? { plan: (unit: Parameters<NonNullable<typeof driver.plan>>[0]) => driver.plan!(unit) } : {}),
    },
    progress: context.progress,
    ...(context.routable ? { routable: context.routable } : {}),
    ...(context.secretEnv ? { secretEnv: context.secretEnv } : {}),
    ...(context.volumes ? { volumes: context.volumes } : {}),
  };
}

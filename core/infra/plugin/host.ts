/**
 * The plugin host: registers plugins once, orders each hook's handlers once,
 * and runs hooks by kind (first, sequential, parallel), wrapping any error a
 * hook throws exactly once.
 */
import type { SvcError } from '../../model/errors.js';
import { hookError, wrapHookError } from './hook-error.js';
import type {
  ClientExporter,
  FirstHooks,
  HookArgs,
  HookName,
  HookOrder,
  HookResult,
  ParallelHooks,
  Plugin,
  ScalingPolicy,
  SequentialHooks,
} from './types.js';
import { checkUniqueNames, checkUniqueRegistries, validatePlugin } from './validate.js';

/** What a plugin list may hold: falsy entries are skipped and nested arrays flattened, so `cond && plugin()` works. */
export type PluginOption = Plugin | false | null | undefined | readonly PluginOption[];

type Tail<T extends readonly unknown[]> = T extends readonly [unknown, ...infer Rest] ? Rest : never;

export interface PluginHost {
  /** The registered plugins in final order: `enforce: 'pre'`, normal, `'post'`; registration order within a tier. */
  readonly plugins: readonly Plugin[];
  /** Every plugin's scaling policies by name (names are unique across plugins), with the plugin that provides each. */
  readonly scalingPolicies: ReadonlyMap<string, RegisteredPolicy>;
  /** Every plugin's client exporters by name (names are unique across plugins), with the plugin that provides each. */
  readonly exporters: ReadonlyMap<string, RegisteredExporter>;
  /** True when at least one plugin implements `hook` (lets callers skip work, e.g. building an AuthRequest). */
  has(hook: HookName): boolean;
  /** Calls each handler in order until one returns non-null; later handlers are not called. Resolves `null` if none did. */
  first<H extends FirstHooks>(hook: H, ...args: HookArgs<H>): Promise<NonNullable<HookResult<H>> | null>;
  /**
   * `first()` for the request path: the result itself when every handler
   * asked answered synchronously (no promise, no microtask per request), else
   * a promise of it. A synchronous throw is thrown here, wrapped the same way.
   */
  firstNow<H extends FirstHooks>(
    hook: H,
    ...args: HookArgs<H>
  ): NonNullable<HookResult<H>> | null | Promise<NonNullable<HookResult<H>> | null>;
  /**
   * Calls each handler in order with the previous handler's result as first
   * argument (the first one gets `initial`) and resolves the last result.
   * A handler returning null/undefined is a `plugin_error`.
   */
  sequential<H extends SequentialHooks>(hook: H, initial: HookArgs<H>[0], ...rest: Tail<HookArgs<H>>): Promise<HookResult<H>>;
  /**
   * `sequential()`, calling `check` on each handler's result before the next
   * handler runs (`transformJob` validates each plugin's job). A throw from
   * `check` becomes a `plugin_error` naming that handler's plugin and hook.
   */
  sequentialChecked<H extends SequentialHooks>(
    hook: H,
    check: (result: HookResult<H>) => void,
    initial: HookArgs<H>[0],
    ...rest: Tail<HookArgs<H>>
  ): Promise<HookResult<H>>;
  /**
   * Starts every handler at once and waits for all of them. Never rejects:
   * each failure (already wrapped with its plugin and hook) goes to the
   * host's `onParallelError`, and the list of failures is resolved (empty
   * when all succeeded) so the caller may act on it too.
   */
  parallel<H extends ParallelHooks>(hook: H, ...args: HookArgs<H>): Promise<SvcError[]>;
}

export interface RegisteredPolicy {
  readonly name: string;
  /** The plugin that provides it, for error messages. */
  readonly plugin: string;
  readonly decide: ScalingPolicy;
}

export interface RegisteredExporter {
  /** What `svc app export --language <name>` picks. */
  readonly name: string;
  /** The plugin that provides it, for error messages. */
  readonly plugin: string;
  readonly exporter: ClientExporter;
}

interface SortedHandler {
  readonly plugin: string;
  readonly handler: (...args: unknown[]) => unknown;
}

const tierRank = { pre: 0, normal: 1, post: 2 } as const;

export interface PluginHostOptions {
  /**
   * Receives every failure of a parallel hook, so that none goes unnoticed
   * even when the caller ignores `parallel()`'s result. Default: one line on
   * stderr.
   */
  readonly onParallelError?: (error: SvcError) => void;
}

/**
 * Validates and orders `options`. Throws `plugin_invalid` or
 * `plugin_incompatible` before any hook can run.
 */
export function createPluginHost(options: readonly PluginOption[], hostOptions: PluginHostOptions = {}): PluginHost {
  const onParallelError = hostOptions.onParallelError ?? ((error: SvcError) => console.error(`svc: ${error.message}`));
  const registered = flatten(options);
  registered.forEach((plugin, position) => {
    validatePlugin(plugin, position);
  });
  const valid = registered as Plugin[];
  checkUniqueNames(valid);
  checkUniqueRegistries(valid);
  // Array#sort is stable, so registration order holds within a tier.
  const plugins: readonly Plugin[] = Object.freeze(
    [...valid].sort((a, b) => tierRank[a.enforce ?? 'normal'] - tierRank[b.enforce ?? 'normal']),
  );
  const cache = new Map<HookName, readonly SortedHandler[]>();

  function handlersOf(hook: HookName): readonly SortedHandler[] {
    let sorted = cache.get(hook);
    if (sorted === undefined) {
      sorted = sortHandlers(plugins, hook);
      cache.set(hook, sorted);
    }
    return sorted;
  }

  function firstNow(hook: HookName, args: unknown[]): unknown {
    const handlers = handlersOf(hook);
    for (let index = 0; index < handlers.length; index++) {
      const entry = handlers[index]!;
      let result: unknown;
      try {
        result = entry.handler(...args);
      } catch (error) {
        throw wrapHookError(error, entry.plugin, hook);
      }
      if (isThenable(result)) return firstAfter(handlers, hook, args, index, result);
      if (result !== null && result !== undefined) return result;
    }
    return null;
  }

  const { scalingPolicies, exporters } = registriesOf(plugins);
  return {
    plugins,
    scalingPolicies,
    exporters,
    has: (hook) => handlersOf(hook).length > 0,

    async first(hook, ...args) {
      return firstNow(hook, args) as never;
    },

    firstNow: (hook, ...args) => firstNow(hook, args) as never,

    sequential: (hook, initial, ...rest) => runSequential(handlersOf(hook), hook, undefined, initial, rest) as never,
    sequentialChecked: (hook, check, initial, ...rest) =>
      runSequential(handlersOf(hook), hook, check as (result: unknown) => void, initial, rest) as never,

    async parallel(hook, ...args) {
      const outcomes = await Promise.allSettled(handlersOf(hook).map((entry) => invoke(entry, hook, args)));
      const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as SvcError] : []));
      for (const failure of failures) onParallelError(failure);
      return failures;
    },
  };
}

/** Runs one handler; what it throws is wrapped with the plugin's and the hook's names. */
async function invoke(entry: SortedHandler, hook: HookName, args: unknown[]): Promise<unknown> {
  try {
    return await entry.handler(...args);
  } catch (error) {
    throw wrapHookError(error, entry.plugin, hook);
  }
}

/** The rest of firstNow() once handler `index` answered with a promise. */
async function firstAfter(
  handlers: readonly SortedHandler[],
  hook: HookName,
  args: unknown[],
  index: number,
  pending: PromiseLike<unknown>,
): Promise<unknown> {
  let result: unknown;
  try {
    result = await pending;
  } catch (error) {
    throw wrapHookError(error, handlers[index]!.plugin, hook);
  }
  if (result !== null && result !== undefined) return result;
  for (const entry of handlers.slice(index + 1)) {
    result = await invoke(entry, hook, args);
    if (result !== null && result !== undefined) return result;
  }
  return null;
}

/** Each handler in turn gets the value the one before returned (a hook that may change what it is given). */
async function runSequential(
  handlers: readonly SortedHandler[],
  hook: HookName,
  check: ((result: unknown) => void) | undefined,
  initial: unknown,
  rest: unknown[],
): Promise<unknown> {
  let value: unknown = initial;
  for (const entry of handlers) {
    const result = await invoke(entry, hook, [value, ...rest]);
    if (result === null || result === undefined) {
      throw hookError(
        entry.plugin,
        hook,
        `returned ${String(result)}`,
        'Return the first argument (unchanged to accept it, or a changed copy); throw an SvcError to refuse.',
      );
    }
    if (check !== undefined) {
      try {
        check(result);
      } catch (error) {
        throw wrapHookError(error, entry.plugin, hook);
      }
    }
    value = result;
  }
  return value;
}

/** The scaling policies and exporters the plugins register, by name (a later plugin's wins). */
function registriesOf(plugins: readonly Plugin[]): {
  scalingPolicies: Map<string, RegisteredPolicy>;
  exporters: Map<string, RegisteredExporter>;
} {
  const scalingPolicies = new Map<string, RegisteredPolicy>();
  for (const plugin of plugins) {
    for (const [name, decide] of Object.entries(plugin.scalingPolicies ?? {}))
      scalingPolicies.set(name, { name, plugin: plugin.name, decide });
  }
  const exporters = new Map<string, RegisteredExporter>();
  for (const plugin of plugins) {
    for (const [name, exporter] of Object.entries(plugin.exporters ?? {})) exporters.set(name, { name, plugin: plugin.name, exporter });
  }
  return { scalingPolicies, exporters };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function flatten(options: readonly PluginOption[]): unknown[] {
  return options.flatMap((option): unknown[] => {
    if (Array.isArray(option)) return flatten(option);
    return option ? [option] : [];
  });
}

/** Handlers of one hook: by enforce tier (plugins arrive tier-sorted), then by hook `order` within the tier. */
function sortHandlers(plugins: readonly Plugin[], hook: HookName): readonly SortedHandler[] {
  const ranked = plugins.flatMap((plugin) => {
    const value = plugin.hooks?.[hook];
    if (value === undefined) return [];
    const handler = (typeof value === 'function' ? value : value.handler) as SortedHandler['handler'];
    const order: HookOrder | undefined = typeof value === 'function' ? undefined : value.order;
    const rank = tierRank[plugin.enforce ?? 'normal'] * 3 + tierRank[order ?? 'normal'];
    return [{ plugin: plugin.name, handler, rank }];
  });
  return Object.freeze(ranked.sort((a, b) => a.rank - b.rank).map(({ plugin, handler }) => ({ plugin, handler })));
}

/**
 * Counters and histograms for the request path. prom-client's label children
 * check and hash their label values again on every `inc()` and `observe()`
 * (about a microsecond each, three times per proxied request); these keep one
 * child per label set, made once, whose updates are plain additions. The
 * registry reads them at scrape time through `get()`, the method it reads
 * every prom-client metric through, so they scrape exactly like prom-client's.
 */
import type { Metric, Registry } from 'prom-client';

type Labels = Readonly<Record<string, string>>;

/** One sample as the registry formats it: `metricName` (default: the metric's name), labels, value. */
interface Sample {
  readonly metricName?: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}

/** One label set's count. */
export class CounterChild {
  value = 0;
  constructor(readonly labels: Labels) {}

  inc(): void {
    this.value++;
  }
}

/** One label set's histogram: per-bucket counts (not cumulative; `get()` sums them), their sum and count. */
export class HistogramChild {
  readonly #bounds: readonly number[];
  /** counts[i]: observations ≤ bounds[i] and > bounds[i - 1]; the last one: above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    bounds: readonly number[],
  ) {
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

abstract class HotSeries<Child extends { readonly labels: Labels }> {
  readonly aggregator = 'sum';
  readonly #children = new Map<string, Child>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The registry needs only name, help, type and get(); its types name prom-client's own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  abstract readonly type: 'counter' | 'histogram';

  /** The child of this label set, made on first use; callers keep it. */
  child(labels: Labels): Child {
    const key = Object.values(labels).join('\u0000');
    let child = this.#children.get(key);
    if (child === undefined) this.#children.set(key, (child = this.make(labels)));
    return child;
  }

  protected abstract make(labels: Labels): Child;
  protected abstract values(child: Child): Sample[];

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.#children.values()].flatMap((child) => this.values(child)),
    };
  }
}

export class HotCounter extends HotSeries<CounterChild> {
  readonly type = 'counter';

  protected make(labels: Labels): CounterChild {
    return new CounterChild(labels);
  }

  protected values(child: CounterChild): Sample[] {
    return [{ labels: child.labels, value: child.value }];
  }
}

export class HotHistogram extends HotSeries<HistogramChild> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(name: string, help: string, bounds: readonly number[], registry: Registry) {
    super(name, help, registry);
    this.#bounds = [...bounds].sort((a, b) => a - b);
  }

  protected make(labels: Labels): HistogramChild {
    return new HistogramChild(labels, this.#bounds);
  }

  protected values(child: HistogramChild): Sample[] {
    const values: Sample[] = [];
    let cumulative = 0;
    this.#bounds.forEach((bound, i) => {
      cumulative += child.counts[i]!;
      values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...child.labels }, value: cumulative });
    });
    values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...child.labels }, value: child.count });
    values.push({ metricName: `${this.name}_sum`, labels: child.labels, value: child.sum });
    values.push({ metricName: `${this.name}_count`, labels: child.labels, value: child.count });
    return values;
  }
}

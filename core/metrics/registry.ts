// The metrics an instance records as things happen (counters, gauges,
// histograms, each with a fixed set of label names), kept between scrapes
// and rendered as families of the text format (text-format.ts). Small on
// purpose: what prom-client's registry does for the core's few metrics,
// without its Node-only imports.
import { checkLabelName, checkMetricName, type Labels, type MetricFamily, type Sample } from './text-format.ts';

export interface Counter {
  inc(labels?: Labels, by?: number): void;
}

export interface Gauge {
  set(labels: Labels, value: number): void;
  inc(labels?: Labels, by?: number): void;
  dec(labels?: Labels, by?: number): void;
  get(labels?: Labels): number;
}

export interface Histogram {
  observe(labels: Labels, value: number): void;
}

export interface MetricRegistry {
  counter(name: string, help: string, labelNames?: string[]): Counter;
  gauge(name: string, help: string, labelNames?: string[]): Gauge;
  /** `buckets`: the upper bounds, ascending; `+Inf` is added. */
  histogram(name: string, help: string, buckets: number[], labelNames?: string[]): Histogram;
  /** Every metric registered, in registration order. */
  families(): MetricFamily[];
}

/** One series per distinct label values: keyed by the values in the label names' order. */
function seriesTable<T>(labelNames: string[], fresh: () => T) {
  for (const n of labelNames) checkLabelName(n);
  const series = new Map<string, { labels: Labels; value: T }>();
  return {
    get(labels: Labels = {}): { labels: Labels; value: T } {
      const values = labelNames.map((n) => labels[n] ?? '');
      const key = JSON.stringify(values);
      let entry = series.get(key);
      if (!entry) {
        entry = { labels: Object.fromEntries(labelNames.map((n, i) => [n, values[i]])), value: fresh() };
        series.set(key, entry);
      }
      return entry;
    },
    entries: () => series.values(),
  };
}

export function createMetricRegistry(): MetricRegistry {
  const renderers: Array<() => MetricFamily> = [];
  const names = new Set<string>();
  const register = (name: string) => {
    checkMetricName(name);
    if (names.has(name)) throw new TypeError(`metric ${name} is registered already`);
    names.add(name);
  };

  function numeric(name: string, help: string, type: 'counter' | 'gauge', labelNames: string[]) {
    register(name);
    const table = seriesTable(labelNames, () => ({ n: 0 }));
    // An unlabelled metric reads 0 from the start rather than being absent until its first change.
    if (labelNames.length === 0) table.get();
    renderers.push(() => ({ name, help, type, samples: [...table.entries()].map((e) => ({ labels: e.labels, value: e.value.n })) }));
    return table;
  }

  return {
    counter(name, help, labelNames = []) {
      const table = numeric(name, help, 'counter', labelNames);
      return {
        inc(labels, by = 1) {
          if (!(by >= 0)) throw new RangeError(`a counter only goes up, by ${by}?`);
          table.get(labels).value.n += by;
        },
      };
    },
    gauge(name, help, labelNames = []) {
      const table = numeric(name, help, 'gauge', labelNames);
      return {
        set: (labels, value) => void (table.get(labels).value.n = value),
        inc: (labels, by = 1) => void (table.get(labels).value.n += by),
        dec: (labels, by = 1) => void (table.get(labels).value.n -= by),
        get: (labels) => table.get(labels).value.n,
      };
    },
    histogram(name, help, buckets, labelNames = []) {
      register(name);
      if (labelNames.includes('le')) throw new TypeError('`le` is the bucket label of a histogram');
      const bounds = [...buckets];
      if (bounds.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= bounds[i - 1]))) throw new TypeError(`${name}: buckets must ascend`);
      const table = seriesTable(labelNames, () => ({ counts: new Array<number>(bounds.length).fill(0), sum: 0, count: 0 }));
      if (labelNames.length === 0) table.get();
      renderers.push(() => {
        const samples: Sample[] = [];
        for (const { labels, value } of table.entries()) {
          // Buckets are cumulative: each counts every observation at or under its bound.
          let cumulative = 0;
          bounds.forEach((b, i) => {
            cumulative += value.counts[i];
            samples.push({ suffix: '_bucket', labels: { ...labels, le: String(b) }, value: cumulative });
          });
          samples.push({ suffix: '_bucket', labels: { ...labels, le: '+Inf' }, value: value.count });
          samples.push({ suffix: '_sum', labels, value: value.sum });
          samples.push({ suffix: '_count', labels, value: value.count });
        }
        return { name, help, type: 'histogram', samples };
      });
      return {
        observe(labels, v) {
          const series = table.get(labels).value;
          const i = bounds.findIndex((b) => v <= b);
          if (i >= 0) series.counts[i]++;
          series.sum += v;
          series.count++;
        },
      };
    },
    families: () => renderers.map((render) => render()),
  };
}

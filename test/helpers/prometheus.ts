// Reading a /metrics answer in the tests with a Prometheus parser
// (parse-prometheus-text-format: the prom2json shape), then one family or
// one series looked up by name and labels.
//
// The parser folds every series of a histogram into one and keeps `_sum`
// and `_count` only of an unlabelled one, so a labelled histogram's series
// is read by giving the parser that series' lines alone, its labels (all but
// `le`) taken off.
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from 'parse-prometheus-text-format';

export type { PrometheusFamily, PrometheusSample };

/** A sample value as the text writes it (JavaScript's Number() does not read `+Inf`). */
const num = (text: string | undefined): number =>
  text === '+Inf' ? Number.POSITIVE_INFINITY : text === '-Inf' ? Number.NEGATIVE_INFINITY : Number(text);

const sameLabels = (a: Record<string, string>, b: Record<string, string>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

export interface Metrics {
  families: PrometheusFamily[];
  family(name: string): PrometheusFamily;
  /** The series of a counter, gauge or untyped family whose labels are exactly `labels`. */
  series(name: string, labels?: Record<string, string>): PrometheusSample;
  value(name: string, labels?: Record<string, string>): number;
  /** A histogram series' count, sum and cumulative buckets. */
  histogram(name: string, labels?: Record<string, string>): { count: number; sum: number; buckets: Record<string, number> };
}

export function readMetrics(text: string): Metrics {
  const families = parsePrometheusTextFormat(text);
  const family = (name: string) => {
    const found = families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric family ${name}; have ${families.map((f) => f.name).join(', ')}`);
    return found;
  };
  const series = (name: string, labels: Record<string, string> = {}) => {
    const found = family(name).metrics.find((m) => sameLabels(m.labels ?? {}, labels));
    if (!found) throw new Error(`no series ${name}${JSON.stringify(labels)}`);
    return found;
  };
  return {
    families,
    family,
    series,
    value: (name, labels) => num(series(name, labels).value),
    histogram(name, labels = {}) {
      if (family(name).type !== 'HISTOGRAM') throw new Error(`${name} is no histogram`);
      const lines: string[] = [];
      for (const line of text.split('\n')) {
        if (!line.startsWith(`${name}_`)) continue;
        // One sample line read by the parser on its own: its name, labels and value.
        const [sample] = parsePrometheusTextFormat(`${line}\n`);
        if (![`${name}_bucket`, `${name}_sum`, `${name}_count`].includes(sample.name)) continue;
        const { le, ...rest } = sample.metrics[0].labels ?? {};
        if (!sameLabels(rest, labels)) continue;
        lines.push(`${sample.name}${le === undefined ? '' : `{le="${le}"}`} ${sample.metrics[0].value}`);
      }
      if (lines.length === 0) throw new Error(`no series ${name}${JSON.stringify(labels)}`);
      const [only] = parsePrometheusTextFormat(`# TYPE ${name} histogram\n${lines.join('\n')}\n`);
      const s = only.metrics[0];
      const buckets = Object.fromEntries(Object.entries(s.buckets ?? {}).map(([le, n]) => [le, num(n)]));
      return { count: num(s.count), sum: num(s.sum), buckets };
    },
  };
}

// The Prometheus text exposition format (version 0.0.4), written by hand: the
// well-kept client (prom-client) imports node:cluster and friends, which the
// core may not (it runs on Bun, Deno, Lambda and in browsers' workers too),
// and what the core exports is a few families rendered at scrape time. The
// Node adapter's process metrics do come from prom-client and are appended
// (ServiceOptions.metrics).
//
// One family: `# HELP`, `# TYPE`, then its samples, each family once.
// Escaping per the format: in HELP, backslash and newline; in label values,
// backslash, double quote and newline.

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Appended to the family's name: `_bucket`, `_sum`, `_count` of a histogram; '' otherwise. */
  suffix?: string;
  labels?: Labels;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function checkMetricName(name: string): void {
  if (!NAME.test(name)) throw new TypeError(`not a Prometheus metric name: ${name}`);
}

export function checkLabelName(name: string): void {
  // `__` names are reserved for Prometheus itself.
  if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new TypeError(`not a Prometheus label name: ${name}`);
}

const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabelValue = (text: string) => text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** A sample value as Go's ParseFloat reads it: the infinities and NaN by their names. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function formatLabels(labels: Labels | undefined): string {
  if (labels === undefined) return '';
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

export function renderFamilies(families: Iterable<MetricFamily>): string {
  let out = '';
  for (const f of families) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) out += `${f.name}${s.suffix ?? ''}${formatLabels(s.labels)} ${formatValue(s.value)}\n`;
  }
  return out;
}

/** A gauge family of samples worked out at scrape time (counts read from storage, say). */
export function gaugeFamily(name: string, help: string, samples: Array<{ labels?: Labels; value: number }>): MetricFamily {
  checkMetricName(name);
  return { name, help, type: 'gauge', samples };
}

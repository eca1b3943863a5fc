// Types for parse-prometheus-text-format, which ships none: the prom2json-like
// shape it returns (values stay strings, as in the text).
declare module 'parse-prometheus-text-format' {
  export interface PrometheusSample {
    labels?: Record<string, string>;
    /** Counters, gauges, untyped. */
    value?: string;
    /** Histograms: cumulative counts by upper bound (`le`), `+Inf` included. */
    buckets?: Record<string, string>;
    /** Summaries. */
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}

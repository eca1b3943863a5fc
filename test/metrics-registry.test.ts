// The core's own Prometheus registry and text rendering (core/metrics): what
// it writes is read back by a Prometheus parser with the same values, help,
// types and labels, escaping included; histograms are cumulative; names and
// registrations a scraper would reject are refused up front.
import { describe, expect, it } from 'vitest';
import { createMetricRegistry } from '../core/metrics/registry.ts';
import { formatValue, gaugeFamily, renderFamilies } from '../core/metrics/text-format.ts';
import { readMetrics } from './helpers/prometheus.ts';

describe('core metrics registry', () => {
  it('renders counters, gauges and histograms that a Prometheus parser reads back', () => {
    const r = createMetricRegistry();
    const requests = r.counter('test_requests_total', 'Requests.', ['method']);
    const temperature = r.gauge('test_temperature', 'A gauge.');
    const latency = r.histogram('test_latency_seconds', 'Latency.', [0.1, 1, 10], ['route']);
    requests.inc({ method: 'GET' });
    requests.inc({ method: 'GET' }, 2);
    requests.inc({ method: 'POST' });
    temperature.set({}, -3.5);
    temperature.inc();
    for (const v of [0.05, 0.1, 0.5, 2, 20]) latency.observe({ route: '/a' }, v);
    latency.observe({ route: '/b' }, 1);

    const m = readMetrics(renderFamilies(r.families()));
    expect(m.families.map((f) => [f.name, f.type, f.help])).toEqual([
      ['test_requests_total', 'COUNTER', 'Requests.'],
      ['test_temperature', 'GAUGE', 'A gauge.'],
      ['test_latency_seconds', 'HISTOGRAM', 'Latency.'],
    ]);
    expect(m.value('test_requests_total', { method: 'GET' })).toBe(3);
    expect(m.value('test_requests_total', { method: 'POST' })).toBe(1);
    expect(m.value('test_temperature')).toBe(-2.5);
    // Cumulative: each bucket counts every observation at or under its bound (0.1 is in le="0.1").
    expect(m.histogram('test_latency_seconds', { route: '/a' })).toEqual({
      count: 5,
      sum: 22.65,
      buckets: { '0.1': 2, '1': 3, '10': 4, '+Inf': 5 },
    });
    expect(m.histogram('test_latency_seconds', { route: '/b' })).toEqual({ count: 1, sum: 1, buckets: { '0.1': 0, '1': 1, '10': 1, '+Inf': 1 } });
  });

  it('an unlabelled metric reads 0 before its first change; a labelled one has no series until then', () => {
    const r = createMetricRegistry();
    r.counter('test_plain_total', 'Plain.');
    r.counter('test_labelled_total', 'Labelled.', ['kind']);
    r.histogram('test_h', 'H.', [1]);
    const m = readMetrics(renderFamilies(r.families()));
    expect(m.value('test_plain_total')).toBe(0);
    expect(m.histogram('test_h')).toEqual({ count: 0, sum: 0, buckets: { '1': 0, '+Inf': 0 } });
    expect(renderFamilies(r.families())).toContain('# TYPE test_labelled_total counter\n');
    expect(renderFamilies(r.families())).not.toContain('test_labelled_total{');
  });

  it('escapes help text and label values as the format says', () => {
    const text = renderFamilies([
      gaugeFamily('test_escapes', 'Back\\slash and\nnewline.', [{ labels: { path: 'C:\\DIR\\"FILE".TXT', note: 'line one\nline two' }, value: 1 }]),
    ]);
    expect(text).toBe(
      '# HELP test_escapes Back\\\\slash and\\nnewline.\n' +
        '# TYPE test_escapes gauge\n' +
        'test_escapes{path="C:\\\\DIR\\\\\\"FILE\\".TXT",note="line one\\nline two"} 1\n',
    );
    // The parser unescapes them back to what was given.
    expect(readMetrics(text).value('test_escapes', { path: 'C:\\DIR\\"FILE".TXT', note: 'line one\nline two' })).toBe(1);
  });

  it('writes the infinities and NaN by their names', () => {
    expect([Infinity, -Infinity, Number.NaN, 0.25, 1e21].map(formatValue)).toEqual(['+Inf', '-Inf', 'NaN', '0.25', '1e+21']);
    expect(readMetrics(renderFamilies([gaugeFamily('test_inf', 'Inf.', [{ value: Infinity }])])).value('test_inf')).toBe(Infinity);
  });

  it('refuses what a scraper would: bad names, reserved labels, a name twice, a counter going down, unordered buckets', () => {
    const r = createMetricRegistry();
    expect(() => r.counter('bad-name', 'x')).toThrow(/metric name/);
    expect(() => r.gauge('test_g', 'x', ['__reserved'])).toThrow(/label name/);
    expect(() => r.histogram('test_h', 'x', [1], ['le'])).toThrow(/le/);
    expect(() => r.histogram('test_h2', 'x', [2, 1])).toThrow(/ascend/);
    r.counter('test_once_total', 'x');
    expect(() => r.gauge('test_once_total', 'x')).toThrow(/registered already/);
    const c = r.counter('test_up_total', 'x');
    expect(() => c.inc({}, -1)).toThrow(/only goes up/);
  });
});

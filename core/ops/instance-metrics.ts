// What this instance counts as things happen, kept between scrapes: uploads
// and their bytes per surface, how long the jobs it ran took and how long
// they had waited, and the /ws connections open on it. Everything read from
// storage or the engine at scrape time is collect.ts's.
import { type Counter, createMetricRegistry, type Gauge, type Histogram, type MetricRegistry } from '../metrics/registry.ts';
import type { MetricsSource } from '../types.ts';

/** The surfaces that take uploads: v2's POST /api/v2/assets, the cloud surface's /upload/image and /upload/mask. */
export type UploadSurface = 'v2' | 'cloud';

export interface InstanceMetrics {
  readonly registry: MetricRegistry;
  /** An upload stored (new or deduplicated), with its size. */
  uploaded(surface: UploadSurface, bytes: number): void;
  /** A job this instance started; its first start only (a re-run's wait would count the earlier run). */
  jobStarted(job: { created_at: number; started_at: number | null; attempts: number }): void;
  /** A job this instance ran ended in `status` at `now` (epoch ms). */
  jobEnded(job: { started_at: number | null }, status: string, now: number): void;
  /** /ws connections open on this instance. */
  readonly websockets: Gauge;
  /** More families the runtime adds (ServiceOptions.metrics). */
  readonly extra: MetricsSource | undefined;
}

// Seconds. Jobs run from a fraction of a second (small graphs) to many minutes (video).
const DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
// Seconds. A wait is short on an idle fleet and long when a tier is saturated: the autoscaler's question.
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600];

export function createInstanceMetrics(extra?: MetricsSource): InstanceMetrics {
  const registry = createMetricRegistry();
  const uploads: Counter = registry.counter('graphrun_uploads_total', 'Uploads stored by this instance (new or deduplicated), by surface.', [
    'surface',
  ]);
  const bytes: Counter = registry.counter('graphrun_upload_bytes_total', 'Bytes of the uploads stored by this instance, by surface.', ['surface']);
  // Both surfaces read 0 from the start, so a rate() over them has a series before the first upload.
  for (const surface of ['v2', 'cloud']) {
    uploads.inc({ surface }, 0);
    bytes.inc({ surface }, 0);
  }
  const duration: Histogram = registry.histogram(
    'graphrun_job_duration_seconds',
    'From start to end of the jobs this instance ran, by the status they ended in.',
    DURATION_BUCKETS,
    ['status'],
  );
  const wait: Histogram = registry.histogram(
    'graphrun_job_queue_wait_seconds',
    'From submission to first start of the jobs this instance started.',
    WAIT_BUCKETS,
  );
  const websockets = registry.gauge('graphrun_websockets', 'WebSocket (/ws) connections open on this instance.');
  return {
    registry,
    uploaded(surface, size) {
      uploads.inc({ surface });
      bytes.inc({ surface }, size);
    },
    jobStarted(job) {
      if (job.attempts !== 1 || job.started_at === null) return;
      wait.observe({}, Math.max(0, job.started_at - job.created_at) / 1000);
    },
    jobEnded(job, status, now) {
      if (job.started_at === null) return;
      duration.observe({ status }, Math.max(0, now - job.started_at) / 1000);
    },
    websockets,
    extra,
  };
}

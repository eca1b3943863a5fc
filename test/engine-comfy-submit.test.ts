// What the worker engine sends a worker with a prompt: a job whose client
// sent no extra_data is submitted without one, as the worker's own clients do.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService;
beforeAll(async () => {
  s = await startWorkerService();
});
afterAll(() => s.close());

it('sends no extra_data when the client sent none', async () => {
  const job = await submitOk(s, {
    '1': { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color: 7 } },
    '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'plain' } },
  });
  await waitForJob(s, job.id, 'succeeded', 15_000);
  const sent = s.workers[0].submissions.find((x) => x.prompt_id === job.id)!;
  expect(sent.body).not.toHaveProperty('extra_data');
  expect(sent.body).toMatchObject({ prompt_id: job.id, client_id: expect.any(String) });
});

// The web dashboard in a real browser (Debian's chromium through
// playwright-core) against a real server with account keys and an operator
// token: it asks for the key, uploads an image, submits a workflow and sees
// the job succeed live with its output's preview; a failing job's error, a
// cancel, the status filter, a mount prefix, and the operator panel. The
// jobs that must be seen running are held by a Gate node until the test
// opens it, so nothing depends on timing. DASHBOARD_SCREENSHOT=1 also writes
// docs/dashboard.png.
import { mkdir, writeFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../adapters/node/server.ts';
import { defineNode } from '../engine/local/define-node.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { launchChromium } from './helpers/chromium.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { assetRef, saveImageWorkflow, submitOk, waitForJob, withHeaders } from './helpers/jobs.ts';
import { createTestNodes, sumWorkflow } from './helpers/local-nodes.ts';
import { buildPng } from './local-engine/png-fixtures.ts';

const KEY = 'key-alice';
const OPERATOR_TOKEN = 'operator-secret';
const WIDTH = 96;
const HEIGHT = 64;

/** A colour gradient, so the preview and the screenshot show something. */
function gradientPng(width = WIDTH, height = HEIGHT): Buffer {
  const samples: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) samples.push(Math.round((255 * x) / (width - 1)), Math.round((255 * y) / (height - 1)), 160);
  }
  return buildPng({ width, height, colorType: 2, bitDepth: 8, samples });
}

/** A node that reports step 1 of 2 and a preview, then waits until the test opens the gate (or the job is canceled). */
function createGate() {
  let open = () => {};
  let opened = new Promise<void>((resolve) => (open = resolve));
  const node = defineNode({
    name: 'Gate',
    category: 'test',
    cacheable: false,
    required: { value: ['INT', {}] },
    outputs: [{ type: 'INT' }],
    run: async ({ value }, ctx) => {
      ctx.progress(1, 2);
      ctx.preview(new Uint8Array(gradientPng(32, 24)), 'png');
      await new Promise<void>((resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        opened.then(resolve);
      });
      ctx.progress(2, 2);
      return { outputs: [value] };
    },
  });
  return {
    node,
    /** Lets every held job go on; later ones are held again. */
    release() {
      open();
      opened = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

const imageWorkflow = (assetId: string) => ({
  l: { class_type: 'LoadImage', inputs: { image: assetRef(assetId) } },
  i: { class_type: 'ImageInvert', inputs: { image: ['l', 0] } },
  s: { class_type: 'SaveImage', inputs: { images: ['i', 0], filename_prefix: 'inverted' } },
});
const failingWorkflow = {
  n: { class_type: 'Number', inputs: { value: 1 } },
  f: { class_type: 'Fail', inputs: { value: ['n', 0] } },
  s: { class_type: 'Show', inputs: { value: ['f', 0] } },
};
const gateWorkflow = (value = 1) => ({
  n: { class_type: 'Number', inputs: { value } },
  g: { class_type: 'Gate', inputs: { value: ['n', 0] } },
  s: { class_type: 'Show', inputs: { value: ['g', 0] } },
});

// A browser on a busy machine is slow: twice the default time per test.
describe('web dashboard (chromium)', { timeout: 60_000 }, () => {
  let browser: Browser;
  let h: Harness;
  let api: Harness;
  const gate = createGate();
  let context: BrowserContext | undefined;
  let problems: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    const test = createTestNodes();
    const engine = createLocalEngine({ nodes: [...builtinNodes, ...test.nodes, gate.node] });
    h = await startHarness('node-server', { engine, accounts: [{ id: 'alice', tier: 'free', apiKeys: [KEY] }], operatorToken: OPERATOR_TOKEN });
    api = withHeaders(h, { authorization: `Bearer ${KEY}` });
  });
  afterAll(async () => {
    gate.release();
    await browser?.close();
    await h?.close();
  });
  afterEach(async () => {
    gate.release();
    await context?.close();
    context = undefined;
    // Uncaught errors and anything the Content-Security-Policy blocked fail the test that caused them.
    const seen = problems;
    problems = [];
    expect(seen).toEqual([]);
  });

  /** A fresh tab (empty sessionStorage) at `url`, recording page errors and CSP refusals. */
  async function open(url: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    await page.goto(url);
    return page;
  }

  async function enterKey(page: Page) {
    await page
      .locator('#notice')
      .filter({ hasText: /needs an API key|did not accept/ })
      .waitFor();
    await page.fill('#key', KEY);
    await page.click('#key-form button[type=submit]');
    await page.locator('#notice').waitFor({ state: 'hidden' });
  }

  async function submitThroughPage(page: Page, workflow: unknown): Promise<string> {
    await page.fill('#workflow', JSON.stringify(workflow, null, 2));
    await page.click('#submit-form button[type=submit]');
    const id = (await page.locator('#submit-result .submitted-id').last().textContent())!;
    // The page opens what it submitted.
    await page.waitForURL((url) => url.hash === `#job=${id}`);
    return id;
  }

  /** Waits until the element `selector` finds is a shown, loaded image; its natural size. (`any`: the tests are typed without the DOM.) */
  async function loadedImage(page: Page, selector: string): Promise<[number, number]> {
    const handle = await page.waitForFunction((sel) => {
      const img = (globalThis as any).document.querySelector(sel);
      return img && !img.hidden && img.complete && img.naturalWidth > 0 && [img.naturalWidth, img.naturalHeight];
    }, selector);
    return (await handle.jsonValue()) as [number, number];
  }

  const row = (page: Page, id: string, status: string) => page.locator(`#jobs li[data-id="${id}"][data-status="${status}"]`);

  it('serves the page and its files under a Content-Security-Policy of this origin only, revalidated on each load', async () => {
    const res = await fetch(`${h.base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    const html = await res.text();
    // Relative references only, nothing from elsewhere, no inline script.
    expect(html).toContain('src="dashboard/app.js"');
    expect(html).not.toMatch(/(src|href)="(\/|https?:)/);
    expect(html).not.toMatch(/<script>/);
    const script = await fetch(`${h.base}/dashboard/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const again = await fetch(`${h.base}/dashboard/app.js`, { headers: { 'if-none-match': script.headers.get('etag')! } });
    expect(again.status).toBe(304);
    const missing = await fetch(`${h.base}/dashboard/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe('not_found');
    expect((await fetch(`${h.base}/`, { method: 'HEAD' })).status).toBe(200);
  });

  it('asks for the key, uploads an image, submits a workflow and shows the job succeeding live with its output preview', async () => {
    const page = await open(`${h.base}/`);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await enterKey(page);
    // The key lives in this tab's session, not in the page's address or a cookie.
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('graphrun.key'))).toBe(KEY);

    await page.setInputFiles('#asset-file', { name: 'gradient.png', mimeType: 'image/png', buffer: gradientPng() });
    await page.click('#upload-form button[type=submit]');
    const assetId = (await page.locator('#upload-result .asset-id').first().textContent())!;
    expect(await page.locator('#upload-result .asset-name').first().textContent()).toBe('gradient.png');
    const asset = (await (await api.fetch(`/api/v2/assets/${assetId}`)).json()) as any;
    expect(asset).toMatchObject({ id: assetId, content_type: 'image/png', file_path: 'gradient.png' });

    await page.evaluate(() => ((globalThis as any).notReloaded = true));
    const id = await submitThroughPage(page, imageWorkflow(assetId));
    await row(page, id, 'succeeded').waitFor();
    expect(await loadedImage(page, '#detail figure.output img')).toEqual([WIDTH, HEIGHT]);
    const preview = page.locator('#detail figure.output img');
    // Fetched with the key: a blob: URL, since an img cannot send the header.
    expect(await preview.getAttribute('src')).toMatch(/^blob:/);
    const job = (await (await api.fetch(`/api/v2/jobs/${id}`)).json()) as any;
    expect(job.outputs).toHaveLength(1);
    expect(await page.locator('#detail figure.output').getAttribute('data-output-id')).toBe(job.outputs[0].id);
    expect(await page.locator('#detail pre.workflow').textContent()).toContain('"ImageInvert"');
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    expect(requests.some((u) => u === `${h.base}/api/v2/assets/${job.outputs[0].id}/content`)).toBe(true);
  });

  it('follows a running job through its event stream: progress, live preview, then succeeded', async () => {
    const page = await open(`${h.base}/`);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await enterKey(page);
    await page.evaluate(() => ((globalThis as any).notReloaded = true));
    const id = await submitThroughPage(page, gateWorkflow());
    await row(page, id, 'running').waitFor();
    await page.locator('#detail .detail-progress', { hasText: 'step 1/2' }).waitFor();
    await page.locator('#jobs li progress').first().waitFor();
    expect(await loadedImage(page, '#detail img.live-preview')).toEqual([32, 24]);
    expect(requests).toContain(`${h.base}/api/v2/jobs/${id}/events`);
    gate.release();
    await row(page, id, 'succeeded').waitFor();
    await page.locator('#detail .detail-status', { hasText: 'succeeded' }).waitFor();
    expect(await page.locator('#detail img.live-preview').isHidden()).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
  });

  it("says when a key is wrong; shows a failed job's error: code, node and message", async () => {
    const page = await open(`${h.base}/`);
    // A wrong key is said to be wrong.
    await page.locator('#notice').filter({ hasText: 'needs an API key' }).waitFor();
    await page.fill('#key', 'not-a-key');
    await page.click('#key-form button[type=submit]');
    await page.locator('#notice').filter({ hasText: 'did not accept this API key' }).waitFor();
    await enterKey(page);
    const id = await submitThroughPage(page, failingWorkflow);
    await row(page, id, 'failed').waitFor();
    const box = page.locator('#detail .error-box');
    await box.waitFor();
    const job = (await (await api.fetch(`/api/v2/jobs/${id}`)).json()) as any;
    expect(await box.locator('.error-code').textContent()).toBe(job.error.code);
    expect(await box.locator('.error-node').textContent()).toContain('node f');
    expect(await box.locator('.error-message').textContent()).toContain('cannot do that');
    // The list says it too.
    expect(await row(page, id, 'failed').textContent()).toContain('cannot do that');
  });

  it('cancels a running job', async () => {
    const page = await open(`${h.base}/`);
    await enterKey(page);
    const id = await submitThroughPage(page, gateWorkflow(2));
    await row(page, id, 'running').waitFor();
    const cancel = page.locator('#detail button', { hasText: 'Cancel' });
    await cancel.click();
    await row(page, id, 'canceled').waitFor();
    expect(await cancel.isHidden()).toBe(true);
    expect(((await (await api.fetch(`/api/v2/jobs/${id}`)).json()) as any).status).toBe('canceled');
  });

  it('lists jobs newest first, filters them by status, and shows one named in the address', async () => {
    const first = await submitOk(api, sumWorkflow('a'));
    const failed = await submitOk(api, failingWorkflow);
    await waitForJob(api, first.id, 'succeeded');
    await waitForJob(api, failed.id, 'failed');
    const page = await open(`${h.base}/#job=${first.id}`);
    await enterKey(page);
    await page.locator(`#jobs li[data-id="${first.id}"]`).waitFor();
    const ids = await Promise.all((await page.locator('#jobs li').all()).map((li) => li.getAttribute('data-id')));
    expect(ids.indexOf(failed.id)).toBeLessThan(ids.indexOf(first.id));
    await page.locator('#detail .detail-id', { hasText: first.id }).waitFor();
    expect(await page.locator(`#jobs li[data-id="${first.id}"]`).getAttribute('class')).toContain('selected');

    await page.selectOption('#status-filter', 'failed');
    await page.waitForFunction((keep) => {
      const rows: any[] = [...(globalThis as any).document.querySelectorAll('#jobs li')];
      return rows.some((li) => li.dataset.id === keep) && rows.every((li) => li.dataset.status === 'failed');
    }, failed.id);
  });

  it('on a service without keys asks for none and previews outputs straight from their content URL', async () => {
    const plain = await startHarness('node-server', { engine: createLocalEngine({ nodes: builtinNodes }) });
    try {
      const page = await open(`${plain.base}/`);
      await page.locator('#jobs-empty').waitFor();
      expect(await page.locator('#notice').isHidden()).toBe(true);
      const id = await submitThroughPage(page, saveImageWorkflow(0x336699, 40, 30));
      await row(page, id, 'succeeded').waitFor();
      expect(await loadedImage(page, '#detail figure.output img')).toEqual([40, 30]);
      const job = (await (await plain.fetch(`/api/v2/jobs/${id}`)).json()) as any;
      expect(await page.locator('#detail figure.output img').getAttribute('src')).toBe(`${plain.base}/api/v2/assets/${job.outputs[0].id}/content`);
    } finally {
      await context?.close();
      context = undefined;
      await plain.close();
    }
  });

  it('works under a mount prefix, with or without the trailing slash, calling only URLs under it', async () => {
    const mounted: RunningServer = await serve(h.service, { host: '127.0.0.1', port: 0, mountPrefix: '/graph' });
    try {
      for (const entry of ['/graph/', '/graph']) {
        const requests: string[] = [];
        context = await browser.newContext();
        const page = await context.newPage();
        page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
        page.on('request', (r) => requests.push(r.url()));
        await page.goto(`${mounted.url}${entry}`);
        await enterKey(page);
        const id = await submitThroughPage(page, sumWorkflow('m', 1, 2));
        await row(page, id, 'succeeded').waitFor();
        const outside = requests.filter((u) => !u.startsWith(`${mounted.url}/graph/`) && u !== `${mounted.url}${entry}`);
        expect(outside).toEqual([]);
        expect(requests).toContain(`${mounted.url}/graph/api/v2/jobs`);
        await context.close();
        context = undefined;
      }
    } finally {
      await mounted.close();
    }
  });

  it('shows queue depth per tier and engine health to the operator, when the service has /ops/status', async () => {
    const probe = await h.fetch('/ops/status', { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    const page = await open(`${h.base}/`);
    await enterKey(page);
    await page.click('#operator-box summary');
    if (probe.status !== 200) {
      // Not in this build: the panel stays hidden, and says why.
      await page.locator('#operator-hint', { hasText: /operator/ }).waitFor();
      expect(await page.locator('#ops').isHidden()).toBe(true);
      return;
    }
    // Without the token the fleet is not shown; with it, it is.
    await page.locator('#operator-hint', { hasText: 'needs the operator token' }).waitFor();
    expect(await page.locator('#ops').isHidden()).toBe(true);
    await page.fill('#operator-token', 'wrong');
    await page.click('#operator-form button[type=submit]');
    await page.locator('#operator-hint', { hasText: 'not accepted' }).waitFor();
    await page.fill('#operator-token', OPERATOR_TOKEN);
    await page.click('#operator-form button[type=submit]');
    await page.locator('#ops').waitFor();
    const status = (await probe.json()) as any;
    for (const queue of status.queues) await page.locator(`#ops tr[data-tier="${queue.tier}"]`).waitFor();
    expect(await page.locator('#ops').textContent()).toContain(status.engine.name);
    expect(await page.locator('#ops .deployment').textContent()).toBe('deployment default: ready');
  });

  it('shows several jobs at once: a succeeded one with its image, a failed one, a running one', async () => {
    const up = new FormData();
    up.append('content_type', 'image/png');
    up.append('file_path', 'gradient.png');
    up.append('file', new Blob([new Uint8Array(gradientPng())]), 'gradient.png');
    const asset = (await (await api.fetch('/api/v2/assets', { method: 'POST', body: up })).json()) as any;
    const failed = await submitOk(api, failingWorkflow);
    await waitForJob(api, failed.id, 'failed');
    const image = await submitOk(api, imageWorkflow(asset.id));
    await waitForJob(api, image.id, 'succeeded');
    const running = await submitOk(api, gateWorkflow(3));
    await waitForJob(api, running.id, 'running');

    const page = await open(`${h.base}/#job=${image.id}`, { width: 1360, height: 940 });
    await page.evaluate(
      ([key, token]) => {
        (globalThis as any).sessionStorage.setItem('graphrun.key', key);
        (globalThis as any).sessionStorage.setItem('graphrun.operator-token', token);
      },
      [KEY, OPERATOR_TOKEN],
    );
    await page.reload();
    await row(page, running.id, 'running').waitFor();
    await row(page, failed.id, 'failed').waitFor();
    expect(await loadedImage(page, '#detail figure.output img')).toEqual([WIDTH, HEIGHT]);
    expect(await page.locator('#jobs li').count()).toBeGreaterThanOrEqual(3);
    if (process.env.DASHBOARD_SCREENSHOT) {
      if ((await h.fetch('/ops/status', { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })).status === 200)
        await page.locator('#ops').waitFor();
      await page.fill('#workflow', JSON.stringify(imageWorkflow(asset.id)));
      await mkdir(new URL('../docs/', import.meta.url), { recursive: true });
      await writeFile(new URL('../docs/dashboard.png', import.meta.url), await page.screenshot({ fullPage: true }));
    }
  });
});

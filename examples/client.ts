// A client of the v2 API: uploads an input image, submits a workflow that
// inverts and scales it, follows the job's progress over Server-Sent Events,
// and downloads the outputs through their signed links.
// Run: npx tsx examples/client.ts --help (the usage text below).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `Usage: npx tsx examples/client.ts [base-url] [--image file.png] [--out dir]

Uploads an image, runs a workflow that inverts and scales it, follows the
job's progress and downloads its outputs.

  base-url        where the service answers, mount prefix included
                  (default: $GRAPHRUN_URL, else http://127.0.0.1:8189)
  --image FILE    the input PNG (default: a built-in 8x8 sample)
  --out DIR       where downloaded outputs are written (default: ./outputs)
  -h, --help      show this text

Environment:
  GRAPHRUN_URL    the base URL when none is given
  GRAPHRUN_TOKEN  sent as "Authorization: Bearer <token>" when set
`;

function args() {
  try {
    const parsed = parseArgs({
      allowPositionals: true,
      options: { image: { type: 'string' }, out: { type: 'string', default: './outputs' }, help: { type: 'boolean', short: 'h' } },
    });
    if (parsed.values.help) {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    if (parsed.positionals.length > 1) throw new Error(`expected at most one base-url, got: ${parsed.positionals.join(' ')}`);
    const base = (parsed.positionals[0] ?? process.env.GRAPHRUN_URL ?? 'http://127.0.0.1:8189').replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(base) || !URL.canParse(base)) throw new Error(`base-url must be an http(s) URL, got: ${base}`);
    return { ...parsed, base };
  } catch (err) {
    // Wrong arguments are the caller's to fix: say what and how, no stack trace.
    process.stderr.write(`client: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    process.exit(2);
  }
}

const { base, values } = args();
const auth: Record<string, string> = process.env.GRAPHRUN_TOKEN ? { authorization: `Bearer ${process.env.GRAPHRUN_TOKEN}` } : {};
// An 8x8 gradient, when no image is given.
const SAMPLE_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAF0lEQVR4nGNkYFigwMCAiVhABDYwOCUAgQ8CfqwOU9UAAAAASUVORK5CYII=';

async function call(url: string | URL, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url, { ...init, headers: { ...auth, ...init.headers } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

// 1. Upload the input (deduplicated by content: the same bytes twice give the same asset).
const bytes = values.image ? await readFile(values.image) : Buffer.from(SAMPLE_PNG, 'base64');
const form = new FormData();
form.set('file', new Blob([bytes]), values.image ? basename(values.image) : 'sample.png');
form.set('content_type', 'image/png');
form.set('file_path', values.image ? basename(values.image) : 'sample.png');
const input = await call(`${base}/api/v2/assets`, { method: 'POST', body: form });
console.log(`uploaded ${input.file_path}: asset ${input.id} (${input.size_bytes} bytes, ${input.hash})`);

// 2. Submit: load the upload, invert it, scale it to 64 px wide, save it.
const workflow = {
  load: { class_type: 'LoadImage', inputs: { image: input.id } },
  invert: { class_type: 'ImageInvert', inputs: { image: ['load', 0] } },
  scale: { class_type: 'ImageScale', inputs: { image: ['invert', 0], upscale_method: 'bilinear', width: 64, height: 0, crop: 'disabled' } },
  save: { class_type: 'SaveImage', inputs: { images: ['scale', 0], filename_prefix: 'client' } },
};
let job = await call(`${base}/api/v2/jobs`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ workflow }),
});
console.log(`submitted job ${job.id}: ${job.status}`);

// 3. Follow it: the links are host-relative (they carry any mount prefix), so resolve them against the base.
const events = await fetch(new URL(job.urls.events, base), { headers: { ...auth, accept: 'text/event-stream' } });
if (!events.ok || !events.body) throw new Error(`events: ${events.status}`);
let buffer = '';
const decoder = new TextDecoder();
for await (const chunk of events.body) {
  buffer += decoder.decode(chunk, { stream: true });
  let end;
  while ((end = buffer.indexOf('\n\n')) >= 0) {
    const frame = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    const event = /^event: (.*)$/m.exec(frame)?.[1];
    const data = frame
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!event || !data) continue;
    const payload = JSON.parse(data);
    if (event === 'status') {
      job = payload;
      console.log(`status: ${job.status}`);
    } else if (event === 'progress') {
      console.log(
        `progress: ${payload.nodes_done ?? 0}/${payload.nodes_total ?? '?'} nodes${payload.current_node_class ? ` (${payload.current_node_class})` : ''}`,
      );
    }
  }
}
// The stream ends after the last status; the job itself is the source of truth.
job = await call(new URL(job.urls.self, base));
if (job.status !== 'succeeded') {
  console.error(`job ${job.id} ended ${job.status}: ${JSON.stringify(job.error)}`);
  process.exit(1);
}

// 4. Download the outputs: their urls are signed, no credentials needed.
await mkdir(values.out!, { recursive: true });
for (const output of job.outputs) {
  const res = await fetch(output.url);
  if (!res.ok) throw new Error(`download ${output.name}: ${res.status}`);
  // basename: a name from the server never picks a directory on this machine.
  const file = join(values.out!, basename(output.name));
  await writeFile(file, new Uint8Array(await res.arrayBuffer()));
  console.log(`saved ${file} (${output.size_bytes} bytes, ${output.content_type})`);
}

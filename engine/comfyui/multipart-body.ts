// A streamed multipart/form-data body: text fields and one file part whose
// bytes come from a stream, so an input asset is uploaded to a worker
// without ever being held in memory. Length is exact when the size is known.

export interface MultipartFile {
  field: string;
  filename: string;
  content_type: string;
  body: ReadableStream<Uint8Array>;
  size?: number;
}

const enc = new TextEncoder();
const quote = (s: string) => s.replace(/[\r\n"\\]/g, (c) => (c === '"' ? '%22' : c === '\\' ? '\\\\' : ' '));

export function multipartBody(
  fields: Record<string, string>,
  file: MultipartFile,
): {
  content_type: string;
  length: number | undefined;
  body: AsyncIterable<Uint8Array>;
} {
  const boundary = `----graphrun${crypto.randomUUID().replace(/-/g, '')}`;
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`;
  }
  head += `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\nContent-Type: ${file.content_type}\r\n\r\n`;
  const start = enc.encode(head);
  const end = enc.encode(`\r\n--${boundary}--\r\n`);
  async function* body(): AsyncIterable<Uint8Array> {
    yield start;
    const reader = file.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
    yield end;
  }
  return {
    content_type: `multipart/form-data; boundary=${boundary}`,
    length: file.size === undefined ? undefined : start.byteLength + file.size + end.byteLength,
    body: body(),
  };
}

/**
 * `GET /api/v1/examples` and `GET /api/v1/examples/:name`: the example
 * projects shipped with svc (`<package root>/examples`), for `svc example
 * list | download`. An example is a folder there whose name is a valid svc
 * name and that holds an `app.py`; its description is the first paragraph of
 * its README.md after the title. A download is the example's bundle, made by
 * the SDK's bundler (`python -m svc.bundle`: deterministic, `.svcignore`
 * honoured, caches and virtual environments left out), sent as
 * `application/gzip`. Names are looked up among the folders found, never
 * joined to a path as given.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBundle } from '../../infra/bundles/create.js';
import { SvcError } from '../../model/errors.js';
import { examplesRoot } from '../../model/paths.js';
import { NAME_PATTERN, nameProblem } from '../../model/names.js';
import { answer, BAD_QUERY, error, listOf, ref } from './openapi/shared.js';
import type { ApiRoute } from './types.js';

export interface ExampleSummary {
  readonly name: string;
  /** The first paragraph of the example's README.md after its title, on one line; '' without one. */
  readonly description: string;
}

/** Largest example bundle sent (the SDK's --max-bytes): examples are small projects. */
const MAX_EXAMPLE_BYTES = 20 * 1024 * 1024;

/** The examples under `root`, sorted by name. A missing folder has none. */
export async function listExamples(root: string = examplesRoot): Promise<ExampleSummary[]> {
  const entries = await readdir(root, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  });
  const examples: ExampleSummary[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || nameProblem(entry.name, 'example') !== null) continue;
    const dir = path.join(root, entry.name);
    if (!(await isFile(path.join(dir, 'app.py')))) continue;
    const readme = await readFile(path.join(dir, 'README.md'), 'utf8').catch(() => '');
    examples.push({ name: entry.name, description: firstParagraph(readme) });
  }
  return examples.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The first paragraph of a Markdown text after its `# Title`, its lines
 * joined with single spaces: what `svc example list` shows. '' when the text
 * has no paragraph (only a title, or a heading, a list, a table, a fence or a
 * quote comes first).
 */
export function firstParagraph(markdown: string): string {
  const lines = markdown.replace(/^\uFEFF/, '').split(/\r?\n/);
  let i = 0;
  const skipBlank = () => {
    while (i < lines.length && lines[i]!.trim() === '') i++;
  };
  skipBlank();
  if (i < lines.length && /^#\s/.test(lines[i]!)) {
    i++;
    skipBlank();
  }
  const paragraph: string[] = [];
  for (; i < lines.length && lines[i]!.trim() !== ''; i++) paragraph.push(lines[i]!.trim());
  const first = paragraph[0] ?? '';
  if (/^(#|```|~~~|\||>|[-*+]\s|\d+[.)]\s|<)/.test(first)) return '';
  return paragraph.join(' ');
}

/** The example's bundle, in memory (examples are small), made in a temporary folder removed afterwards. */
export async function bundleExample(dir: string): Promise<{ data: Buffer; sha256: string }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'svc-example-'));
  try {
    const bundle = await createBundle(dir, { out: path.join(tmp, 'example.tar.gz'), maxBytes: MAX_EXAMPLE_BYTES });
    return { data: await readFile(bundle.path), sha256: bundle.sha256 };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function findExample(name: string): Promise<ExampleSummary> {
  const examples = await listExamples();
  const found = examples.find((example) => example.name === name);
  if (found !== undefined) return found;
  throw noSuchExample(name, examples);
}

/** The `not_found` of a name no example has: it lists the examples there are. */
function noSuchExample(name: string | undefined, examples: readonly ExampleSummary[]): SvcError {
  const names = examples.map((example) => example.name);
  return new SvcError(
    'not_found',
    `there is no example ${JSON.stringify(name)}; the examples are: ${names.length === 0 ? '(none)' : names.join(', ')}.`,
    {
      hint: '`svc example list` shows each example with what it shows.',
      details: { examples: names },
    },
  );
}

export const exampleRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/examples',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listExamples',
      summary: 'The example projects the server ships, each with the first paragraph of its README (`svc example list`).',
      responses: {
        200: answer('Every example, sorted by name.', listOf('examples', ref('ExampleSummary'))),
        400: BAD_QUERY,
      },
    },
    async handle() {
      return { status: 200, body: { examples: await listExamples() } };
    },
  },
  {
    method: 'GET',
    path: '/examples/:name',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'downloadExample',
      summary: 'One example project as a gzip tarball of its files (`svc example download`).',
      parameters: [
        {
          name: 'name',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: NAME_PATTERN },
          // Every example's name follows the rule (listExamples): a name that breaks it is one no example has.
          refusal: { code: 'not_found', refuse: async (name) => noSuchExample(name, await listExamples()) },
        },
      ],
      responses: {
        200: {
          description:
            'The example\'s bundle: a deterministic tar.gz of its files and folders (no links), made like `python3 -m svc.bundle` (`.svcignore` honoured, caches left out). `Content-Disposition: attachment; filename="<name>.tar.gz"`; `X-Svc-Bundle-Sha256` is its sha256.',
          headers: {
            'Content-Disposition': { schema: { type: 'string' } },
            'X-Svc-Bundle-Sha256': { schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
          },
          content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
        },
        400: BAD_QUERY,
        404: error('`not_found`: no example has this name; the message lists the examples, and `details.examples` holds their names.'),
      },
    },
    async handle({ params }) {
      const example = await findExample(params.name!);
      const { data, sha256 } = await bundleExample(path.join(examplesRoot, example.name));
      return {
        status: 200,
        body: data,
        headers: {
          'Content-Type': 'application/gzip',
          'Content-Disposition': `attachment; filename="${example.name}.tar.gz"`,
          'X-Svc-Bundle-Sha256': sha256,
          'Cache-Control': 'no-cache',
        },
      };
    },
  },
];

async function isFile(file: string): Promise<boolean> {
  const found = await stat(file).catch(() => null);
  return found !== null && found.isFile();
}

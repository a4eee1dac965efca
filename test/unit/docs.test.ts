import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSettings, renderReferencePages, ROOT } from '../../scripts/docs-reference.ts';
import { SCOPES, SCOPE_ALLOWS } from '../../src/model/scopes.ts';
import { CodedError, ERROR_CODES, ErrorCode } from '../../src/errors.ts';
import { statusOf } from '../../src/routes/http-answers.ts';
import { HTTP_ROUTES } from '../../src/routes/http-routes.ts';

/** Every Markdown file the checks cover: README.md and docs/**\/*.md, as absolute paths. */
function markdownFiles(): string[] {
  const files = [join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files;
}

/** The text of a Markdown file without fenced code blocks (their lines become empty, so line numbers stay). */
function withoutFences(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/**
 * GitHub's anchor of a heading: the rendered text (inline code and links reduced to
 * their text), lowercased, every character that is not a letter, digit, space, `-` or
 * `_` dropped, spaces turned into hyphens.
 */
function slugify(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings, duplicates numbered as GitHub does (`x`, `x-1`, `x-2`). */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text)) {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const slug = slugify(match[1]!);
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** One link of a Markdown file: where it is and what it points to. */
interface Link {
  file: string;
  line: number;
  target: string;
}

/** The inline links and images of a Markdown text, outside code fences and inline code. */
function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  withoutFences(text).forEach((line, index) => {
    // Inline code is not a link; a link whose text is code keeps its `](target)`.
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line: index + 1, target: match[1]! });
    }
  });
  return links;
}

/** How {@link brokenLinks} reads files: the disk, or pages a test makes up. */
interface Files {
  read(path: string): string;
  exists(path: string): boolean;
  isDirectory(path: string): boolean;
}

const DISK: Files = {
  read: (path) => readFileSync(path, 'utf8'),
  exists: (path) => existsSync(path),
  isDirectory: (path) => statSync(path).isDirectory(),
};

/**
 * The links among `files` that do not resolve, one line each (`docs/a.md:3: b.md#x (why)`):
 * a relative path to a file or directory that does not exist or lies outside the
 * repository, or an anchor that is not a heading of its page. External (`http:`,
 * `https:`, `mailto:`) links are not checked.
 */
function brokenLinks(files: readonly string[], io: Files = DISK): string[] {
  const read = (path: string) => io.read(path);
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let set = anchorsOf.get(path);
    if (!set) {
      set = headingAnchors(read(path));
      anchorsOf.set(path, set);
    }
    return set;
  };
  for (const file of files) {
    for (const link of linksOf(file, read(file))) {
      if (/^(https?|mailto):/i.test(link.target)) continue;
      const where = `${relative(ROOT, link.file)}:${link.line}: ${link.target}`;
      const [pathPart = '', anchor] = link.target.split('#', 2);
      const target = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
      if (!target.startsWith(ROOT)) {
        broken.push(`${where} (outside the repository)`);
        continue;
      }
      if (pathPart !== '' && !io.exists(target)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!target.endsWith('.md') || io.isDirectory(target)) {
        broken.push(`${where} (an anchor into a file that is not Markdown)`);
      } else if (!anchors(target).has(anchor)) {
        broken.push(`${where} (no heading with this anchor)`);
      }
    }
  }
  return broken;
}

describe('documentation', () => {
  it('has reference pages equal to what the code generates (npm run docs:reference)', () => {
    for (const [path, text] of renderReferencePages()) {
      const file = join(ROOT, path);
      expect(existsSync(file), `${path} is missing: run npm run docs:reference`).toBe(true);
      expect(readFileSync(file, 'utf8'), `${path} is stale: run npm run docs:reference`).toBe(text);
    }
  });

  it('lists every configuration setting with its meaning', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/configuration.md'), 'utf8');
    const settings = configSettings();
    expect(settings.length).toBeGreaterThan(30);
    for (const setting of settings) {
      expect(setting.meaning, `${setting.name} has no .describe() text in src/config.ts`).not.toBe('');
      expect(page).toContain(`| \`${setting.name}\` |`);
    }
    expect(settings.find((setting) => setting.name === 'PORT')?.defaultValue).toBe('4000');
    expect(settings.find((setting) => setting.name === 'SKETCH_LEVELS')?.defaultValue).toBe('day,hour,quarter');
    expect(settings.find((setting) => setting.name === 'MONGODB_URI')?.defaultValue).toBeNull();
  });

  it('lists every error code with its status and meaning, the status the plain HTTP routes answer with', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/error-codes.md'), 'utf8');
    for (const code of Object.values(ErrorCode)) {
      const info = ERROR_CODES[code];
      expect(info.meaning, code).not.toBe('');
      expect(page).toContain(`| \`${code}\` | ${info.status} |`);
      // CSRF_HEADER_REQUIRED is raised only with its status set on the error itself (403).
      if (code !== ErrorCode.CSRF_HEADER_REQUIRED) expect(statusOf(new CodedError(code, 'x')), code).toBe(info.status);
    }
  });

  it('lists every plain HTTP route', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/http-routes.md'), 'utf8');
    for (const route of HTTP_ROUTES) expect(page).toContain(`| ${route.method} | \`${route.path}\` |`);
    expect(HTTP_ROUTES.map((route) => route.path)).toEqual(expect.arrayContaining(['/v1/metrics', '/api/v1/write']));
  });

  it('lists every scope', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/scopes.md'), 'utf8');
    for (const scope of SCOPES) expect(page).toContain(`| \`${scope}\` | ${SCOPE_ALLOWS[scope].slice(0, 20)}`);
  });

  it('has no broken relative link or anchor in README.md and docs/', () => {
    const files = markdownFiles();
    expect(files.length).toBeGreaterThan(15);
    expect(brokenLinks(files)).toEqual([]);
  });

  it('makes GitHub anchors of headings', () => {
    expect(slugify('Charts: bounds, fill, transforms, ranking, the flat form')).toBe('charts-bounds-fill-transforms-ranking-the-flat-form');
    expect(slugify('Example queries and their answers on flights-20k')).toBe('example-queries-and-their-answers-on-flights-20k');
    expect(slugify('The `buckets` subscription')).toBe('the-buckets-subscription');
    expect(slugify('Dense: TSBS cpu-only, 100 hosts x 6 h every 10 s (216,000 readings)')).toBe(
      'dense-tsbs-cpu-only-100-hosts-x-6-h-every-10-s-216000-readings',
    );
    expect([...headingAnchors('# A\n## Notes\n```\n# not a heading\n```\n### Notes\n')]).toEqual(['a', 'notes', 'notes-1']);
  });

  it('finds a missing file, a missing anchor and a link out of the repository, and ignores code and external links', () => {
    const pages: Record<string, string> = {
      [join(ROOT, 'docs/a.md')]: [
        '# A',
        '## Here',
        'See [b](b.md#there), [b2](b.md#nowhere), [self](#here), [gone](#gone), [none](missing.md).',
        'Code: [src](../src/config.ts), [up](../../outside.md), [web](https://example.com/x#y).',
        '`[not a link](nowhere.md)`',
        '```',
        '[in a fence](nowhere.md)',
        '```',
      ].join('\n'),
      [join(ROOT, 'docs/b.md')]: '# B\n## There\n',
    };
    const io: Files = {
      read: (path) => pages[path] ?? readFileSync(path, 'utf8'),
      exists: (path) => path in pages || existsSync(path),
      isDirectory: (path) => !(path in pages) && statSync(path).isDirectory(),
    };
    const broken = brokenLinks([join(ROOT, 'docs/a.md')], io).map((line) => line.replace(/ \(.*\)$/, ''));
    expect(broken).toHaveLength(4);
    expect(broken).toContain('docs/a.md:3: b.md#nowhere');
    expect(broken).toContain('docs/a.md:3: missing.md');
    expect(broken).toContain('docs/a.md:3: #gone');
    expect(broken).toContain('docs/a.md:4: ../../outside.md');
  });
});

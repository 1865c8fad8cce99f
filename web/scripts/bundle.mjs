// Bundles the dashboard's own ES modules (web/js/, entry main.js) into one file,
// web/dist/app.js, so a page load fetches one script instead of a dozen: each module
// becomes a function scope whose exports form an object, imports read those objects,
// and `import('./pages/x.js')` of a bundled page resolves to it at once. The chart
// module stays a separate file (web/js/chart.js with the vendored uPlot), imported on
// first use, so pages paint their figures without waiting for the chart library.
//
// index.html names the bundle and the stylesheet with a hash of their content
// (?v=...), which lets the coordinator let browsers keep them for good.
//
//   node web/scripts/bundle.mjs          writes web/dist/app.js and updates index.html
//   node web/scripts/bundle.mjs --check  exits 1 when either is out of date
//
// It knows the module syntax this code base uses, and refuses anything else rather than
// guess: `import { a, b } from './x.js';`, `import('./x.js')`, and `export` before a
// function, async function, const or class declaration.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
// Modules left out of the bundle, fetched from their own URL when first imported.
const EXTERNAL = new Set(['js/chart.js']);
const STATIC = '/static/';

const IMPORT_FROM = /^import\s*\{([^}]*)\}\s*from\s*'([^']+)';[ \t]*$/gm;
const IMPORT_DYNAMIC = /\bimport\(\s*'([^']+)'\s*\)/g;
const EXPORT_DECL = /^export\s+((?:async\s+)?function\s*\*?|const|let|class)\s+([A-Za-z_$][\w$]*)/gm;

export function bundle(root = web) {
  const order = [];
  const modules = new Map();  // path relative to web/ -> {source, deps}
  const visit = (rel, stack) => {
    if (modules.has(rel)) {
      if (stack.includes(rel)) throw new Error(`bundle: import cycle ${[...stack, rel].join(' -> ')}`);
      return;
    }
    const source = readFileSync(join(root, rel), 'utf8');
    const mod = { source, deps: [] };
    modules.set(rel, mod);
    const resolve = (spec) => {
      if (!spec.startsWith('.')) throw new Error(`bundle: ${rel} imports '${spec}'; only relative imports are bundled`);
      return posix.normalize(posix.join(posix.dirname(rel), spec));
    };
    for (const m of source.matchAll(IMPORT_FROM)) mod.deps.push(resolve(m[2]));
    for (const m of source.matchAll(IMPORT_DYNAMIC)) mod.deps.push(resolve(m[1]));
    const rest = source.replace(IMPORT_FROM, '').replace(IMPORT_DYNAMIC, '');
    if (/^\s*(import|export)\b(?!\s+((async\s+)?function|const|let|class)\b)/m.test(rest) || /\bimport\s*\.\s*meta\b/.test(rest))
      throw new Error(`bundle: ${rel} uses module syntax this bundler does not handle`);
    for (const dep of mod.deps) if (!EXTERNAL.has(dep)) visit(dep, [...stack, rel]);
    order.push(rel);
  };
  visit('js/main.js', []);

  const ids = new Map(order.map((rel, i) => [rel, i]));
  const ref = (rel) => `$m[${ids.get(rel)}]`;
  const parts = [
    '// Built by web/scripts/bundle.mjs from web/js/; edit those files and run it again.',
    "'use strict';",
    'const $m = [];',
  ];
  for (const rel of order) {
    const { source } = modules.get(rel);
    const exported = [];
    let body = source
      .replace(IMPORT_FROM, (_, names, spec) => {
        const dep = posix.normalize(posix.join(posix.dirname(rel), spec));
        const list = names.split(',').map((n) => n.trim()).filter(Boolean)
          .map((n) => n.replace(/^([\w$]+)\s+as\s+([\w$]+)$/, '$1: $2'));
        return `const { ${list.join(', ')} } = ${ref(dep)};`;
      })
      .replace(IMPORT_DYNAMIC, (_, spec) => {
        const dep = posix.normalize(posix.join(posix.dirname(rel), spec));
        return EXTERNAL.has(dep) ? `import('${STATIC}${dep}')` : `Promise.resolve(${ref(dep)})`;
      })
      .replace(EXPORT_DECL, (_, kind, name) => {
        if (kind === 'let') throw new Error(`bundle: ${rel} exports let ${name}; a bundled export is not a live binding`);
        exported.push(name);
        return `${kind} ${name}`;
      });
    body = body.replace(/\s+$/, '');
    parts.push(`// ${rel}`, `${ref(rel)} = (() => {`, body, `return { ${exported.join(', ')} };`, '})();');
  }
  return `${parts.join('\n')}\n`;
}

const version = (text) => createHash('sha256').update(text).digest('hex').slice(0, 12);

// index.html with the bundle and the stylesheet named by their content hashes.
export function indexHtml(html, app, css) {
  if (!/<script type="module" async src="\/static\/dist\/app\.js/.test(html) || !/<link rel="stylesheet" href="\/static\/app\.css/.test(html))
    throw new Error('bundle: index.html must load /static/dist/app.js (module, async) and /static/app.css');
  let out = html.replace(/(<script type="module" async src=")[^"]*(")/, `$1${STATIC}dist/app.js?v=${version(app)}$2`);
  out = out.replace(/(<link rel="stylesheet" href=")\/static\/app\.css[^"]*(")/, `$1${STATIC}app.css?v=${version(css)}$2`);
  return out;
}

function main() {
  const check = process.argv.includes('--check');
  const app = bundle();
  const css = readFileSync(join(web, 'app.css'), 'utf8');
  const htmlPath = join(web, 'index.html');
  const html = readFileSync(htmlPath, 'utf8');
  const newHtml = indexHtml(html, app, css);
  const appPath = join(web, 'dist', 'app.js');
  const stale = [];
  if (!existsSync(appPath) || readFileSync(appPath, 'utf8') !== app) stale.push('web/dist/app.js');
  if (newHtml !== html) stale.push('web/index.html');
  if (check) {
    if (stale.length) {
      console.error(`bundle: ${stale.join(' and ')} out of date with web/js/; run node web/scripts/bundle.mjs`);
      process.exit(1);
    }
    console.log('bundle: web/dist/app.js and web/index.html are up to date');
    return;
  }
  mkdirSync(dirname(appPath), { recursive: true });
  writeFileSync(appPath, app);
  writeFileSync(htmlPath, newHtml);
  console.log(`bundle: wrote web/dist/app.js (${app.length} bytes, ${stale.length ? 'changed' : 'unchanged'})`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();

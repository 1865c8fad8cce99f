// Bundles the dashboard's own ES modules (web/js/) into two files, so a page load
// fetches two scripts instead of a dozen: web/dist/boot.js (entry boot.js, a plain
// script that asks for the page's data first thing) and web/dist/app.js (entry main.js,
// the module that renders). Each module becomes a function scope whose exports form an
// object, imports read those objects, and `import('./pages/x.js')` of a bundled page
// resolves to it at once. The chart module stays a separate file (web/js/chart.js with
// the vendored uPlot), imported on first use, so pages paint their figures without
// waiting for the chart library.
//
// index.html names the bundles and the stylesheet with a hash of their content
// (?v=...), which lets the coordinator let browsers keep them for good.
//
//   node web/scripts/bundle.mjs          writes web/dist/ and updates index.html
//   node web/scripts/bundle.mjs --check  exits 1 when any of them is out of date
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

// The bundle of `entry` (relative to web/); `classic` wraps it for a plain <script>.
export function bundle(entry, { root = web, classic = false } = {}) {
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
  visit(entry, []);

  const ids = new Map(order.map((rel, i) => [rel, i]));
  const ref = (rel) => `$m[${ids.get(rel)}]`;
  const parts = [
    '// Built by web/scripts/bundle.mjs from web/js/; edit those files and run it again.',
    ...(classic ? ['(() => {'] : []),
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
  if (classic) {
    if (/\bimport\(/.test(parts.join('\n'))) throw new Error(`bundle: ${entry} is a plain script and cannot import()`);
    parts.push('})();');
  }
  return `${parts.join('\n')}\n`;
}

const version = (text) => createHash('sha256').update(text).digest('hex').slice(0, 12);

// index.html with the bundles and the stylesheet named by their content hashes.
export function indexHtml(html, { boot, app, css }) {
  const refs = [
    [/(<script src=")\/static\/dist\/boot\.js[^"]*(")/, `dist/boot.js?v=${version(boot)}`],
    [/(<link rel="stylesheet" href=")\/static\/app\.css[^"]*(")/, `app.css?v=${version(css)}`],
    [/(<script type="module" async src=")\/static\/dist\/app\.js[^"]*(")/, `dist/app.js?v=${version(app)}`],
  ];
  let out = html;
  for (const [re, url] of refs) {
    if (!re.test(out)) throw new Error(`bundle: index.html has no reference matching ${re}`);
    out = out.replace(re, `$1${STATIC}${url}$2`);
  }
  return out;
}

function main() {
  const check = process.argv.includes('--check');
  const files = { boot: bundle('js/boot.js', { classic: true }), app: bundle('js/main.js') };
  const css = readFileSync(join(web, 'app.css'), 'utf8');
  const html = readFileSync(join(web, 'index.html'), 'utf8');
  const out = new Map([
    ['dist/boot.js', files.boot],
    ['dist/app.js', files.app],
    ['index.html', indexHtml(html, { ...files, css })],
  ]);
  const stale = [...out].filter(([rel, text]) => !existsSync(join(web, rel)) || readFileSync(join(web, rel), 'utf8') !== text)
    .map(([rel]) => `web/${rel}`);
  if (check) {
    if (stale.length) {
      console.error(`bundle: ${stale.join(', ')} out of date with web/js/; run node web/scripts/bundle.mjs`);
      process.exit(1);
    }
    console.log('bundle: web/dist/ and web/index.html are up to date');
    return;
  }
  mkdirSync(join(web, 'dist'), { recursive: true });
  for (const [rel, text] of out) writeFileSync(join(web, rel), text);
  console.log(`bundle: ${stale.length ? `wrote ${stale.join(', ')}` : 'nothing changed'}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();

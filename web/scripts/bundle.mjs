// Bundles the dashboard's own ES modules (web/js/) with esbuild into two files, so a page
// load fetches two scripts instead of a dozen: web/dist/boot.js (entry boot.js, a plain
// script that asks for the page's data first thing) and web/dist/app.js (entry main.js,
// the module that renders). The pages main.js imports with `import('./pages/x.js')` are
// bundled into app.js, so such an import resolves at once. The chart module stays a
// separate file (web/js/chart.js with the vendored uPlot), imported on first use from
// /static/js/chart.js, so pages paint their figures without waiting for the chart library.
//
// index.html names the bundles and the stylesheet with a hash of their content
// (?v=...), which lets the coordinator let browsers keep them for good.
//
//   node web/scripts/bundle.mjs          writes web/dist/ and updates index.html
//   node web/scripts/bundle.mjs --check  exits 1 when any of them is out of date
//                                        (77, a skip, when esbuild is not installed)
//
// esbuild is a devDependency pinned in web/package-lock.json (npm ci --prefix web): the
// checked-in bundles are its output, byte for byte, so the version that checks them must
// be the version that wrote them, and this script refuses any other. The output holds no
// eval and no inline script, as the coordinator's Content-Security-Policy requires.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
// Modules left out of the bundle, fetched from their own URL when first imported.
const EXTERNAL = new Set(['js/chart.js']);
const STATIC = '/static/';
const BANNER = '// Built by web/scripts/bundle.mjs (esbuild) from web/js/; edit those files and run it again.';

// Thrown when esbuild is not installed at all: the caller may treat it as "cannot check".
export class MissingBundler extends Error {}

// esbuild from web/node_modules, refused unless it is the version package-lock.json pins.
let loaded = null;
export async function esbuild() {
  if (loaded) return loaded;
  let mod;
  try {
    mod = await import('esbuild');
  } catch (e) {
    if (e.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new MissingBundler('bundle: esbuild is not installed in web/node_modules; run npm ci --prefix web');
  }
  const lock = JSON.parse(readFileSync(join(web, 'package-lock.json'), 'utf8'));
  const pinned = lock.packages?.['node_modules/esbuild']?.version;
  if (mod.version !== pinned)
    throw new Error(`bundle: web/node_modules has esbuild ${mod.version} but web/package-lock.json pins ${pinned}; run npm ci --prefix web`);
  loaded = mod;
  return mod;
}

// Resolution kept to what this code base means: a relative path to a file under `root`.
// A bare name would pull a package from node_modules into the bundle, past vendor/, so it
// is refused; an EXTERNAL module becomes an import of its served URL.
function resolver(root) {
  return {
    name: 'kport-resolve',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return { path: resolve(root, args.path) };
        const from = relative(root, args.importer).split(sep).join('/');
        if (!args.path.startsWith('./') && !args.path.startsWith('../'))
          return { errors: [{ text: `${from} imports '${args.path}'; only relative imports are bundled` }] };
        const abs = resolve(args.resolveDir, args.path);
        const rel = relative(root, abs).split(sep).join('/');
        if (rel.startsWith('../') || isAbsolute(rel))
          return { errors: [{ text: `${from} imports '${args.path}', which is outside web/` }] };
        if (EXTERNAL.has(rel)) return { path: `${STATIC}${rel}`, external: true };
        if (!existsSync(abs)) return { errors: [{ text: `${from} imports '${args.path}', and web/${rel} does not exist` }] };
        return { path: abs };
      });
    },
  };
}

// The bundle of `entry` (relative to `root`, web/ by default); `classic` makes it a plain
// script (an IIFE with nothing global but what the code assigns) instead of a module.
export async function bundle(entry, { root = web, classic = false } = {}) {
  const { build } = await esbuild();
  let result;
  try {
    result = await build({
      absWorkingDir: root, // the `// js/x.js` comments name files relative to it, wherever the checkout is
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: classic ? 'iife' : 'esm',
      platform: 'browser',
      target: 'es2022',
      charset: 'ascii',
      legalComments: 'eof',
      banner: { js: classic ? `${BANNER}\n'use strict';` : BANNER },
      plugins: [resolver(root)],
      logLevel: 'silent',
    });
  } catch (e) {
    if (!e.errors) throw e;
    // esbuild counts columns from 0; editors and compilers from 1.
    const where = (m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : '');
    throw new Error(`bundle: ${entry}: ${e.errors.map((m) => where(m) + m.text).join('; ')}`);
  }
  return result.outputFiles[0].text;
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

async function main() {
  const check = process.argv.includes('--check');
  let files;
  try {
    files = { boot: await bundle('js/boot.js', { classic: true }), app: await bundle('js/main.js') };
  } catch (e) {
    console.error(e.message);
    // Without esbuild the check cannot run: a skip (CTest's SKIP_RETURN_CODE), never a
    // pass; where CI is set, deploy/install-deps.sh should have installed it, so it fails.
    process.exit(check && e instanceof MissingBundler && !process.env.CI ? 77 : 1);
  }
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();

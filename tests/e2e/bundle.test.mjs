// web/scripts/bundle.mjs (esbuild, pinned by web/package-lock.json) on small module trees
// of its own: what it bundles runs as the modules would, each module is included once,
// the chart module stays a file of its own, the output is the same bytes wherever the
// tree lies, and imports it must not follow are refused with the file that asked.
//
//   node --test tests/e2e/bundle.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { bundle, esbuild, MissingBundler } from '../../web/scripts/bundle.mjs';

// Without esbuild in web/node_modules these tests cannot run: a skip, never a pass (and a
// failure where CI is set, since deploy/install-deps.sh installs it there).
try {
  await esbuild();
} catch (e) {
  console.log(e.message);
  if (!(e instanceof MissingBundler)) process.exit(1);
  process.exit(process.env.CI ? 1 : 77);
}

// A web/ folder holding `files` ({'js/main.js': source, ...}); fn(root); then removed.
async function withTree(files, fn) {
  const root = mkdtempSync(join(tmpdir(), 'kport-bundle-'));
  try {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
    await fn(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// Writes a module bundle into `root` and imports it.
let serial = 0;
async function load(root, text) {
  const out = join(root, `out-${serial++}.mjs`);
  writeFileSync(out, text);
  return import(pathToFileURL(out).href);
}

const tree = {
  'js/main.js': [
    "import { twice as double, NAME } from './lib/a.js';",
    "import { b } from './b.js';",
    "const pages = { p: () => import('./pages/p.js') };",
    'globalThis.kportBundled = { value: double(21), name: NAME, b: b(), page: pages.p(), chart: () => import(\'./chart.js\') };',
  ].join('\n'),
  'js/lib/a.js': "export function twice(x) { return 2 * x; }\nexport const NAME = 'a';\n",
  'js/b.js': "import { NAME } from './lib/a.js';\nexport function b() { return `${NAME}b`; }\n",
  'js/pages/p.js': "import { twice } from '../lib/a.js';\nexport async function render() { return twice(2); }\n",
  'js/chart.js': 'export const never = 1;\n',
  'js/boot.js': "import { NAME } from './lib/a.js';\nglobalThis.kportBooted = NAME;\n",
};

test('a bundle runs like its modules, each module once', async () => {
  await withTree(tree, async (root) => {
    const text = await bundle('js/main.js', { root });
    assert.equal(text.match(/^\s*\/\/ js\/lib\/a\.js$/gm).length, 1, 'a module shared by three is bundled once');
    assert.doesNotMatch(text, /^\s*(import|export)\s/m, 'no module syntax is left');
    assert.match(text, /import\("\/static\/js\/chart\.js"\)/, 'the chart module stays a file of its own');
    assert.doesNotMatch(text, /never = 1/, 'and is not bundled');
    assert.doesNotMatch(text, /\beval\b|new Function/, 'nothing the Content-Security-Policy forbids');
    await load(root, text);
    const got = globalThis.kportBundled;
    assert.equal(got.value, 42, 'a renamed import');
    assert.equal(got.name, 'a');
    assert.equal(got.b, 'ab', 'a module imported by two others');
    assert.equal(await (await got.page).render(), 4, "import('./pages/p.js') resolves to the bundled page");
  });
});

test('a plain-script bundle runs as a classic script and keeps to its own scope', async () => {
  await withTree(tree, async (root) => {
    const text = await bundle('js/boot.js', { root, classic: true });
    // A classic script in a fresh global: module syntax would not even parse here.
    const sandbox = {};
    runInNewContext(text, sandbox, { filename: 'boot.js' });
    assert.equal(sandbox.kportBooted, 'a');
    assert.deepEqual(Object.keys(sandbox), ['kportBooted'], 'nothing else becomes a global');
  });
});

test('the same sources give the same bytes, wherever they lie', async () => {
  const texts = [];
  for (let i = 0; i < 2; i++) {
    await withTree(tree, async (root) => {
      texts.push([await bundle('js/main.js', { root }), await bundle('js/boot.js', { root, classic: true })]);
    });
  }
  assert.deepEqual(texts[0], texts[1]);
  assert.doesNotMatch(texts[0].join('\n'), /kport-bundle-/, 'no path of the checkout is written into the bundle');
});

test('module syntax beyond named imports bundles as the modules would run', async () => {
  const files = {
    ...tree,
    'js/main.js': [
      "import greet, { counter, bump } from './lib/c.js';",
      "import * as all from './lib/a.js';",
      "export { twice } from './lib/a.js';",
      "import { ping } from './ping.js';",
      'bump();',
      "globalThis.kportSyntax = { greet: greet('x'), counter, keys: Object.keys(all).sort(), ping: ping(3) };",
    ].join('\n'),
    'js/lib/c.js': 'export let counter = 0;\nexport function bump() { counter += 1; }\nexport default (s) => `hi ${s}`;\n',
    // A cycle, as ES modules allow: each side uses the other only when called.
    'js/ping.js': "import { pong } from './pong.js';\nexport function ping(n) { return n ? pong(n - 1) : 'ping'; }\n",
    'js/pong.js': "import { ping } from './ping.js';\nexport function pong(n) { return n ? ping(n - 1) : 'pong'; }\n",
  };
  await withTree(files, async (root) => {
    const mod = await load(root, await bundle('js/main.js', { root }));
    const got = globalThis.kportSyntax;
    assert.equal(got.greet, 'hi x', 'a default import');
    assert.equal(got.counter, 1, 'an exported let is a live binding');
    assert.deepEqual(got.keys, ['NAME', 'twice'], 'a namespace import');
    assert.equal(got.ping, 'pong', 'an import cycle');
    assert.equal(mod.twice(4), 8, 'a re-export');
  });
});

test('imports the bundler must not follow are refused, naming the file', async () => {
  const cases = [
    ["import { twice } from 'somewhere';\n", /js\/main\.js imports 'somewhere'; only relative imports are bundled/],
    ["import { x } from '../../outside.js';\n", /js\/main\.js imports '\.\.\/\.\.\/outside\.js', which is outside web\//],
    ["import { x } from './missing.js';\n", /js\/main\.js imports '\.\/missing\.js', and web\/js\/missing\.js does not exist/],
    ["import { nope } from './lib/a.js';\nnope();\n", /No matching export .*"nope"/],
    ['const = 1;\n', /bundle: js\/main\.js: js\/main\.js:1:7: Expected identifier/],
  ];
  for (const [main, error] of cases) {
    await withTree({ ...tree, 'js/main.js': main }, async (root) => {
      await assert.rejects(bundle('js/main.js', { root }), error, main);
    });
  }
});

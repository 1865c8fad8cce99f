// web/scripts/bundle.mjs on small module trees of its own: what it bundles runs as the
// modules would, each module is included once, and syntax it does not handle is refused
// rather than bundled wrong.
//
//   node --test tests/e2e/bundle.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle } from '../../web/scripts/bundle.mjs';

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
    const text = bundle('js/main.js', { root });
    assert.equal(text.match(/^\/\/ js\/lib\/a\.js$/gm).length, 1, 'a module shared by three is bundled once');
    assert.doesNotMatch(text, /^\s*(import|export)\s/m, 'no module syntax is left');
    assert.match(text, /import\('\/static\/js\/chart\.js'\)/, 'the chart module stays a file of its own');
    assert.doesNotMatch(text, /export const never/, 'and is not bundled');
    const out = join(root, 'out.mjs');
    writeFileSync(out, text);
    await import(pathToFileURL(out).href);
    const got = globalThis.kportBundled;
    assert.equal(got.value, 42, 'a renamed import');
    assert.equal(got.name, 'a');
    assert.equal(got.b, 'ab', 'a module imported by two others');
    assert.equal(await (await got.page).render(), 4, "import('./pages/p.js') resolves to the bundled page");
  });
});

test('a plain-script bundle keeps to its own scope', async () => {
  await withTree(tree, async (root) => {
    const text = bundle('js/boot.js', { root, classic: true });
    const out = join(root, 'boot.cjs');
    writeFileSync(out, text);
    await import(pathToFileURL(out).href);
    assert.equal(globalThis.kportBooted, 'a');
    assert.equal(globalThis.$m, undefined, 'the module table is not a global');
    assert.throws(() => bundle('js/main.js', { root, classic: true }), /plain script and cannot import\(\)/);
  });
});

test('syntax the bundler does not handle is refused', async () => {
  const cases = [
    ['export let x = 1;\n', /live binding/],
    ['export default function f() {}\n', /module syntax this bundler does not handle/],
    ["import x from './lib/a.js';\n", /module syntax this bundler does not handle/],
    ["export { y } from './lib/a.js';\n", /module syntax this bundler does not handle/],
    ["import { twice } from 'somewhere';\n", /only relative imports/],
    ["import { loop } from './loop.js';\nexport const z = 1;\n", /import cycle/],
  ];
  for (const [main, error] of cases) {
    await withTree({ ...tree, 'js/main.js': main, 'js/loop.js': "import { z } from './main.js';\nexport const loop = z;\n" }, async (root) => {
      assert.throws(() => bundle('js/main.js', { root }), error, main);
    });
  }
});
